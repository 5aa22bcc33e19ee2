// Moves one file between a caller's stream and the session's agent (PUT and GET /v1/files,
// docs/agent.md "Files"), over the same port-forward and under the same key as grading. Nothing is
// held whole: an upload goes out in signed frames as it arrives, a download comes back through a
// stream that checks each frame. The agent's refusals come back as FileTransferError with its
// code; everything the connection does wrong as an AgentUnreachableError.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { pipeline, type Duplex, type Readable } from "node:stream";
import {
  fileLimits,
  filesAgentVersion,
  type FileErrorCode,
  type UploadedFile,
} from "../../common/files-api.ts";
import { AgentErrorBody } from "../../common/grading.ts";
import { type AgentClient, type ConnectToAgent } from "../agent/client.ts";
import { AgentUnreachableError, AgentUnverifiedError, unverifiedReasons } from "../agent/errors.ts";
import { agentMacOf, parseJson, readSmallAnswer } from "../agent/answer.ts";
import {
  signAgentRequest,
  signStreamRequest,
  verifyAgentAnswer,
  verifyStreamAnswer,
} from "../agent/signature.ts";
import { fileSizeHeader, framedLength, SignFrames, VerifyFrames } from "./file-frames.ts";

/** A refusal the agent signed, or one the BFF makes about the agent: a file problem, in words. */
export class FileTransferError extends Error {
  constructor(
    readonly status: number,
    readonly code: FileErrorCode | "invalid",
    message: string,
  ) {
    super(message);
  }
}

export interface AgentFilesOptions {
  connect: ConnectToAgent;
  keyFor: (sessionId: string) => string;
  /** Asked first: an agent older than filesAgentVersion has no /v1/files. */
  health: AgentClient["health"];
  /** For the port-forward and for the agent's first answer. Default 15 s. */
  answerWithinMs?: number;
}

export interface Download {
  size: number;
  /** The file's bytes, each frame checked; errors (BrokenFramesError) when the agent's stream breaks. */
  body: Readable;
}

export interface AgentFiles {
  upload(
    sessionId: string,
    path: string,
    size: number,
    body: Readable,
    signal: AbortSignal,
  ): Promise<UploadedFile>;
  download(sessionId: string, path: string, signal: AbortSignal): Promise<Download>;
}

export function createAgentFiles(options: AgentFilesOptions): AgentFiles {
  const answerWithinMs = options.answerWithinMs ?? 15_000;

  async function requireFiles(sessionId: string, signal: AbortSignal): Promise<void> {
    const { version } = await options.health(sessionId, signal);
    if (compareVersions(version, filesAgentVersion) < 0) {
      throw new FileTransferError(
        409,
        "agent_too_old",
        `This VM's agent (version ${version}) is too old to move files; they need version ${filesAgentVersion}. Only VMs launched from now on have it: save your work elsewhere, end this session and start a new one.`,
      );
    }
  }

  async function open(sessionId: string, signal: AbortSignal): Promise<Duplex> {
    try {
      return await options.connect(sessionId, AbortSignal.any([signal, AbortSignal.timeout(answerWithinMs)]));
    } catch (error) {
      signal.throwIfAborted();
      if (error instanceof AgentUnreachableError) throw error;
      throw new AgentUnreachableError(
        `The VM's agent cannot be reached (${error instanceof Error ? error.message : String(error)}).`,
      );
    }
  }

  return {
    async upload(sessionId, path, size, body, signal) {
      await requireFiles(sessionId, signal);
      const key = options.keyFor(sessionId);
      const target = `/v1/files?path=${encodeURIComponent(path)}`;
      const signed = signStreamRequest(key, "PUT", target, size);
      const stream = await open(sessionId, signal);
      const request = httpRequest({
        method: "PUT",
        path: target,
        createConnection: () => stream as Socket,
        headers: {
          host: "lab-agent",
          connection: "close",
          authorization: signed.authorization,
          [fileSizeHeader]: String(size),
          "content-length": String(framedLength(size)),
          // The agent says 100 Continue only once the path and the disk are good: a refused file is
          // never sent, and the caller's body is left unread for its route to refuse.
          expect: "100-continue",
        },
      });
      request.on("continue", () => {
        pipeline(body, new SignFrames(key, signed.nonce), request, () => undefined);
      });
      const answer = await answerOf(request, signal, answerWithinMs);
      const text = await readSmallAnswer(answer);
      if (!verifyAgentAnswer(key, signed.nonce, answer.statusCode ?? 0, text, agentMacOf(answer))) {
        throw unverified(answer, text);
      }
      const json = parseJson(text);
      if (answer.statusCode !== 200) throw refusal(answer.statusCode ?? 0, json);
      const done = json as UploadedFile;
      return { path: String(done.path), bytes: Number(done.bytes) };
    },

    async download(sessionId, path, signal) {
      await requireFiles(sessionId, signal);
      const key = options.keyFor(sessionId);
      const target = `/v1/files?path=${encodeURIComponent(path)}`;
      const signed = signAgentRequest(key, "GET", target, Buffer.alloc(0));
      const stream = await open(sessionId, signal);
      const request = httpRequest({
        method: "GET",
        path: target,
        createConnection: () => stream as Socket,
        headers: { host: "lab-agent", connection: "close", authorization: signed.authorization },
      });
      request.end();
      const answer = await answerOf(request, signal, answerWithinMs);
      const sizeText = answer.headers[fileSizeHeader];
      if (answer.statusCode === 200 && typeof sizeText === "string" && /^\d{1,12}$/.test(sizeText)) {
        const size = Number(sizeText);
        if (!verifyStreamAnswer(key, signed.nonce, 200, size, agentMacOf(answer))) {
          answer.destroy();
          throw new AgentUnverifiedError(unverifiedReasons.unproven, 200);
        }
        // Signed, but the size is what the student's file helper told the agent: no more than any
        // download may be, whatever it says.
        if (size > fileLimits.maxBytes) {
          answer.destroy();
          throw new AgentUnreachableError("The VM's agent announced a file larger than any download may be.");
        }
        const body = new VerifyFrames(key, signed.nonce, size);
        pipeline(answer, body, () => undefined);
        return { size, body };
      }
      const text = await readSmallAnswer(answer);
      if (!verifyAgentAnswer(key, signed.nonce, answer.statusCode ?? 0, text, agentMacOf(answer))) {
        throw unverified(answer, text);
      }
      throw refusal(answer.statusCode ?? 0, parseJson(text));
    },
  };
}

/** The agent's answer; the wait for its head is bounded, its body then streams as long as needed. */
function answerOf(request: ClientRequest, signal: AbortSignal, withinMs: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      request.destroy();
      reject(new AgentUnreachableError(`The VM's agent did not answer within ${withinMs / 1000} s.`));
    }, withinMs);
    const onAbort = () => request.destroy(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    // Once it started answering, the upload's own progress keeps the connection alive.
    request.once("continue", () => clearTimeout(timer));
    request.once("response", (answer) => {
      clearTimeout(timer);
      resolve(answer);
    });
    request.once("error", (error) => {
      clearTimeout(timer);
      if (signal.aborted) return reject(signal.reason);
      reject(
        new AgentUnreachableError(
          `The connection to the VM's agent broke (${error.message}); the VM or its agent may have stopped.`,
        ),
      );
    });
  });
}

function unverified(answer: IncomingMessage, text: Buffer): AgentUnverifiedError {
  const status = answer.statusCode ?? 0;
  const signed = agentMacOf(answer) !== undefined;
  if (!signed && status === 401) return new AgentUnverifiedError(unverifiedReasons.signatureRefused, status);
  const parsed = AgentErrorBody.safeParse(parseJson(text));
  if (!signed && status === 503 && parsed.success && parsed.data.error.code === "no_key") {
    return new AgentUnverifiedError(unverifiedReasons.noKey, status);
  }
  return new AgentUnverifiedError(unverifiedReasons.unproven, status);
}

/** The agent's signed refusal: its code where it is one of ours, its message as it wrote it. */
function refusal(status: number, json: unknown): Error {
  const parsed = AgentErrorBody.safeParse(json);
  if (!parsed.success) return new AgentUnreachableError(`The VM's agent answered with HTTP ${status}.`);
  const { code, message } = parsed.data.error;
  const known = agentFileCodes.has(code) ? (code as FileErrorCode | "invalid") : undefined;
  if (known) return new FileTransferError(status, known, message);
  return new AgentUnreachableError(`The VM's agent refused (${code}): ${message}`);
}

const agentFileCodes = new Set<string>([
  "invalid_path",
  "outside_home",
  "no_such_file",
  "no_such_folder",
  "not_a_file",
  "permission_denied",
  "too_large",
  "disk_full",
  "invalid",
]);

/** Dotted version numbers, part by part; a missing part counts as 0. */
export function compareVersions(a: string, b: string): number {
  const parts = (text: string) => text.split(".").map((part) => Number.parseInt(part, 10) || 0);
  const [left, right] = [parts(a), parts(b)];
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}
