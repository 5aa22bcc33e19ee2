// Talks to a session's lab agent (docs/agent.md) over whatever connection the transport opens:
// in production KubeVirt's port-forward through the cluster, in tests a TCP socket. Every request is
// signed with the session's key and every answer must carry the agent's signature over it
// (signature.ts): the key never crosses the wire, and whatever answers without it (a fake
// agent on the port, a replayed answer) is never believed. Every way this can fail ends as
// AgentUnreachableError (AgentUnverifiedError for an answer that did not prove itself) with a
// reason a person can read.
import type { Duplex } from "node:stream";
import { agentLimits, type AgentCheckSpec, type AgentTtySize } from "../../common/agent-protocol.ts";
import {
  AgentActivity,
  AgentCheckResponse,
  AgentErrorBody,
  AgentHealth,
  type AgentCheckResult,
} from "../../common/grading.ts";
import { parseJson } from "./answer.ts";
import {
  AgentRefusedError,
  AgentUnreachableError,
  AgentUnverifiedError,
  unverifiedReasons,
} from "./errors.ts";
import { sealKey } from "./key.ts";
import { agentMacHeader, newAgentNonce, signAgentRequest, verifyAgentAnswer } from "./signature.ts";
import {
  ConnectionLostError,
  MalformedAnswerError,
  requestOverStream,
  ResponseTooLargeError,
  type StreamResponse,
} from "./http-over-stream.ts";

/** Opens a fresh connection to the agent's port (agentPort) of the session's VM. Should reject with a plain reason. */
export type ConnectToAgent = (sessionId: string, signal: AbortSignal) => Promise<Duplex>;

export interface AgentClientOptions {
  connect: ConnectToAgent;
  /** The session's key: agentKey(secret, sessionId). It signs and verifies; it is never sent. */
  keyFor: (sessionId: string) => string;
  /** A warm VM's key until a launch claims it: warmAgentKey(secret, name). */
  warmKeyFor?: (vmName: string) => string;
  /** For opening the connection, the cluster's port-forward handshake included. Default 10 s. */
  connectTimeoutMs?: number;
  /** Allowed on top of the checks' own timeouts before the answer counts as lost. Default 15 s. */
  answerSlackMs?: number;
}

export interface AgentClient {
  /** Results in the order of `checks`; more than the agent takes per request go in several requests. */
  runChecks(
    sessionId: string,
    checks: readonly AgentCheckSpec[],
    signal?: AbortSignal,
  ): Promise<AgentCheckResult[]>;
  health(sessionId: string, signal?: AbortSignal): Promise<AgentHealth>;
  /** Sets the size of the guest's console terminal (POST /v1/tty); its programs get SIGWINCH. */
  setTtySize(sessionId: string, size: AgentTtySize, signal?: AbortSignal): Promise<void>;
  /**
   * What the agent sees of the student at work (GET /v1/activity, agent 2.3.0); undefined from an
   * older agent, which answers that it has no such request: its activity is unknown, not none.
   */
  activity(sessionId: string, signal?: AbortSignal): Promise<AgentActivity | undefined>;
  /** A warm VM's agent, asked with the warm key: it answers once the VM has booted. */
  warmHealth(vmName: string, signal?: AbortSignal): Promise<AgentHealth>;
  /**
   * Makes a warm VM's agent take the session's key (POST /v1/claim): sent sealed under the warm key,
   * answered under the new one. Resolves once the agent proved the change; after it, the warm key
   * opens nothing.
   */
  claim(vmName: string, signal?: AbortSignal): Promise<void>;
}

/**
 * JSON escapes a control character as \u00XX: six bytes for one byte of output. Every check may
 * send agentLimits.outputBytes of it, plus room for the rest of the body.
 */
const maxAnswerBytes = agentLimits.checksPerRequest * agentLimits.outputBytes * 6 + 1024 * 1024;

export function createAgentClient(options: AgentClientOptions): AgentClient {
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const answerSlackMs = options.answerSlackMs ?? 15_000;

  const warmKeyFor = (vmName: string) => {
    if (!options.warmKeyFor) throw new Error("This agent client has no warm keys.");
    return options.warmKeyFor(vmName);
  };

  async function exchange(
    sessionId: string,
    request: {
      method: "GET" | "POST";
      path: string;
      /** A function is called with the request's nonce: a claim seals its key under it. */
      body?: unknown | ((nonce: string) => unknown);
      answerWithinMs: number;
      /** Default: the session's key signs the request and proves the answer. */
      keys?: { sign: string; verify: string };
    },
    signal: AbortSignal | undefined,
  ): Promise<unknown> {
    const callerSignal = signal ?? new AbortController().signal;
    const keys = request.keys ?? { sign: options.keyFor(sessionId), verify: options.keyFor(sessionId) };
    const nonce = newAgentNonce();
    const value: unknown = typeof request.body === "function" ? request.body(nonce) : request.body;
    const body = value === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(value));
    // A fresh nonce per request: the agent refuses one it has seen, and only an answer signed over
    // this nonce counts, so no answer to an earlier request passes for this one.
    const signed = signAgentRequest(keys.sign, request.method, request.path, body, nonce);
    const stream = await openConnection(sessionId, callerSignal);
    const deadline = AbortSignal.any([callerSignal, AbortSignal.timeout(request.answerWithinMs)]);
    let answer;
    try {
      answer = await requestOverStream(stream, {
        method: request.method,
        path: request.path,
        headers: {
          authorization: signed.authorization,
          accept: "application/json",
          ...(value === undefined ? {} : { "content-type": "application/json" }),
        },
        body: value === undefined ? undefined : body,
        maxResponseBytes: maxAnswerBytes,
        signal: deadline,
      });
    } catch (error) {
      if (callerSignal.aborted) throw callerSignal.reason;
      throw explainExchangeFailure(error, request.answerWithinMs);
    }
    const mac = answer.headers[agentMacHeader];
    const macText = typeof mac === "string" ? mac : undefined;
    if (!verifyAgentAnswer(keys.verify, signed.nonce, answer.status, answer.body, macText)) {
      throw explainUnverified(answer, macText !== undefined);
    }
    const json = parseJson(answer.body);
    if (answer.status !== 200) throw explainRefusal(answer.status, json);
    return json;
  }

  async function openConnection(sessionId: string, callerSignal: AbortSignal): Promise<Duplex> {
    const signal = AbortSignal.any([callerSignal, AbortSignal.timeout(connectTimeoutMs)]);
    try {
      const stream = await options.connect(sessionId, signal);
      // A transport that ignored the signal may still deliver: nobody wants that connection now.
      if (signal.aborted) {
        stream.destroy();
        throw signal.reason;
      }
      return stream;
    } catch (error) {
      if (callerSignal.aborted) throw callerSignal.reason;
      if (signal.aborted) {
        throw new AgentUnreachableError(
          `The VM's grading agent did not accept a connection within ${seconds(connectTimeoutMs)}.`,
        );
      }
      if (error instanceof AgentUnreachableError) throw error;
      throw new AgentUnreachableError(
        `The VM's grading agent cannot be reached (${describeSocketError(error)}).`,
      );
    }
  }

  return {
    async runChecks(sessionId, checks, signal) {
      const results: AgentCheckResult[] = [];
      for (let start = 0; start < checks.length; start += agentLimits.checksPerRequest) {
        const batch = checks.slice(start, start + agentLimits.checksPerRequest);
        // Run one after another the checks could never take longer than this.
        const answerWithinMs =
          batch.reduce((sum, check) => sum + check.timeoutSeconds * 1000, 0) + answerSlackMs;
        const json = await exchange(
          sessionId,
          { method: "POST", path: "/v1/checks", body: { checks: batch }, answerWithinMs },
          signal,
        );
        const parsed = AgentCheckResponse.safeParse(json);
        if (!parsed.success) throw unreadableAnswer();
        results.push(...parsed.data.results);
      }
      return results;
    },

    async health(sessionId, signal) {
      const json = await exchange(
        sessionId,
        { method: "GET", path: "/v1/health", answerWithinMs: answerSlackMs },
        signal,
      );
      const parsed = AgentHealth.safeParse(json);
      if (!parsed.success) throw unreadableAnswer();
      return parsed.data;
    },

    async warmHealth(vmName, signal) {
      const key = warmKeyFor(vmName);
      const json = await exchange(
        vmName,
        {
          method: "GET",
          path: "/v1/health",
          answerWithinMs: answerSlackMs,
          keys: { sign: key, verify: key },
        },
        signal,
      );
      const parsed = AgentHealth.safeParse(json);
      if (!parsed.success) throw unreadableAnswer();
      return parsed.data;
    },

    async claim(vmName, signal) {
      const warmKey = warmKeyFor(vmName);
      const sessionKey = options.keyFor(vmName);
      const json = await exchange(
        vmName,
        {
          method: "POST",
          path: "/v1/claim",
          body: (nonce: string) => ({ key: sealKey(warmKey, nonce, sessionKey) }),
          answerWithinMs: answerSlackMs,
          keys: { sign: warmKey, verify: sessionKey },
        },
        signal,
      );
      if ((json as { claimed?: unknown } | null)?.claimed !== true) throw unreadableAnswer();
    },

    async activity(sessionId, signal) {
      let json: unknown;
      try {
        json = await exchange(
          sessionId,
          { method: "GET", path: "/v1/activity", answerWithinMs: answerSlackMs },
          signal,
        );
      } catch (error) {
        if (error instanceof AgentRefusedError && error.agentCode === "not_found") return undefined;
        throw error;
      }
      const parsed = AgentActivity.safeParse(json);
      if (!parsed.success) throw unreadableAnswer();
      return parsed.data;
    },

    async setTtySize(sessionId, size, signal) {
      await exchange(
        sessionId,
        {
          method: "POST",
          path: "/v1/tty",
          body: { rows: size.rows, cols: size.cols },
          answerWithinMs: answerSlackMs,
        },
        signal,
      );
    },
  };
}

function explainExchangeFailure(error: unknown, answerWithinMs: number): AgentUnreachableError {
  if (error instanceof ResponseTooLargeError) {
    return new AgentUnreachableError(
      `The grading agent's answer was larger than ${Math.round(error.limitBytes / 1024 / 1024)} MiB.`,
    );
  }
  if (error instanceof MalformedAnswerError) return unreadableAnswer();
  if (error instanceof ConnectionLostError) {
    return new AgentUnreachableError(
      "The connection to the grading agent broke before it answered (the VM or its agent may have stopped).",
    );
  }
  if ((error as Error | undefined)?.name === "TimeoutError") {
    return new AgentUnreachableError(`The grading agent did not answer within ${seconds(answerWithinMs)}.`);
  }
  return new AgentUnreachableError(`Talking to the grading agent failed (${describeSocketError(error)}).`);
}

/**
 * Which fixed reason an answer that did not verify gets. Only an unsigned answer's status and error
 * code choose among them (the real agent cannot sign when it refuses the signature or has no key);
 * nothing it says is passed on, and a wrong signature is never anything but unproven.
 */
function explainUnverified(answer: StreamResponse, signed: boolean): AgentUnverifiedError {
  const { status } = answer;
  if (!signed && status === 401) return new AgentUnverifiedError(unverifiedReasons.signatureRefused, status);
  if (!signed && status === 503) {
    const parsed = AgentErrorBody.safeParse(parseJson(answer.body));
    if (parsed.success && parsed.data.error.code === "no_key") {
      return new AgentUnverifiedError(unverifiedReasons.noKey, status);
    }
  }
  return new AgentUnverifiedError(unverifiedReasons.unproven, status);
}

/** A verified refusal: the agent's own words, which can be trusted now. */
function explainRefusal(status: number, json: unknown): AgentUnreachableError {
  const parsed = AgentErrorBody.safeParse(json);
  if (!parsed.success) return new AgentUnreachableError(`The grading agent answered with HTTP ${status}.`);
  const { code, message } = parsed.data.error;
  return new AgentRefusedError(`The grading agent refused (${code}): ${message}`, code);
}

function unreadableAnswer(): AgentUnreachableError {
  return new AgentUnreachableError("The grading agent sent an answer the console cannot read.");
}

const socketErrorWords: Record<string, string> = {
  ECONNREFUSED: "nothing listens on the agent's port",
  ECONNRESET: "the connection was reset",
  EPIPE: "the connection was closed",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "the VM's address is unreachable",
  ENETUNREACH: "the VM's network is unreachable",
};

function describeSocketError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code && socketErrorWords[code]) return socketErrorWords[code];
  return error instanceof Error ? error.message : String(error);
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
