// A lab's extra terminals: a shell on a real PTY inside the VM, opened by its agent (GET
// /v1/terminal, docs/agent.md "Terminals") over the same port-forward and key as grading. The line
// carries signed frames both ways (terminal-frames.ts); it has a window size of its own, so a fit
// is a frame on the line and nothing is typed. A console shows it as it shows the serial console.
import { request as httpRequest, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { AgentErrorBody } from "../../common/grading.ts";
import type { SetGuestSize, GuestSize } from "../console/guest-size.ts";
import { notices } from "../console/notices.ts";
import type { OpenUpstream } from "../console/upstream-connector.ts";
import { UpstreamRefusedError, type UpstreamEvents, type UpstreamLine } from "../console/upstream.ts";
import { AgentUnreachableError, type ConnectToAgent } from "../grading/agent-client.ts";
import { agentMacOf, parseJson, readSmallAnswer } from "../grading/agent-answer.ts";
import { signAgentRequest, verifyAgentAnswer } from "../grading/agent-signature.ts";
import {
  BadTerminalFrameError,
  resizePayload,
  TerminalFrameReader,
  TerminalFrameSigner,
  terminalFrameBytes,
  terminalFrameTypes,
  type TerminalFrame,
} from "./terminal-frames.ts";

export const terminalUpgrade = "lab-agent-terminal";

/** A terminal's line, with the window size its PTY has. */
export interface TerminalLine extends UpstreamLine {
  resize(size: GuestSize): void;
}

/** Opens a new shell in the session's VM, its PTY `size` big. Rejects with UpstreamRefusedError. */
export type OpenTerminal = (sessionId: string, size: GuestSize, signal: AbortSignal) => Promise<TerminalLine>;

export interface AgentTerminalOptions {
  connect: ConnectToAgent;
  keyFor: (sessionId: string) => string;
  /** For the port-forward and the agent's answer. Default 15 s. */
  answerWithinMs?: number;
}

export function createTerminalOpener(options: AgentTerminalOptions): OpenTerminal {
  const answerWithinMs = options.answerWithinMs ?? 15_000;
  return async (sessionId, size, signal) => {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(answerWithinMs)]);
    let stream: Duplex;
    try {
      stream = await options.connect(sessionId, deadline);
    } catch (error) {
      signal.throwIfAborted();
      throw new UpstreamRefusedError(notices.terminalUnreachable(reasonOf(error)), false);
    }
    const key = options.keyFor(sessionId);
    const target = `/v1/terminal?rows=${size.rows}&cols=${size.cols}`;
    const signed = signAgentRequest(key, "GET", target, Buffer.alloc(0));
    const request = httpRequest({
      method: "GET",
      path: target,
      createConnection: () => stream as Socket,
      headers: {
        host: "lab-agent",
        connection: "Upgrade",
        upgrade: terminalUpgrade,
        authorization: signed.authorization,
      },
    });
    request.end();
    const answer = await upgradeOf(request, deadline, signal);
    if (answer.kind === "upgraded") {
      const { response, socket, head } = answer;
      if (!verifyAgentAnswer(key, signed.nonce, 101, Buffer.alloc(0), agentMacOf(response))) {
        socket.destroy();
        throw new UpstreamRefusedError(notices.terminalUnproven, true);
      }
      const line = new AgentTerminalLine(socket, key, signed.nonce);
      if (head.length > 0) line.received(head);
      return line;
    }
    throw await refusalOf(answer.response, key, signed.nonce);
  };
}

/**
 * A terminal's connection and the size its next one opens with: a fit sets the open PTY's size
 * and is remembered for the shell a reconnection starts.
 */
export function terminalUpstream(
  open: OpenTerminal,
  initial: GuestSize,
): { connect: OpenUpstream; setGuestSize: SetGuestSize } {
  let size = initial;
  let current: TerminalLine | undefined;
  return {
    connect: async (sessionId, signal) => {
      current = await open(sessionId, size, signal);
      return current;
    },
    setGuestSize: async (_sessionId, next) => {
      size = next;
      current?.resize(next);
      return { ok: true };
    },
  };
}

/** The shell's exit as the agent reports it. */
interface ShellExit {
  exitCode: number | null;
  signal: string | null;
}

class AgentTerminalLine implements TerminalLine {
  private readonly reader: TerminalFrameReader;
  private readonly signer: TerminalFrameSigner;
  private events: UpstreamEvents | undefined;
  /** What arrived before anyone listened. */
  private early: TerminalFrame[] = [];
  private closing = false;
  private done = false;
  private answeredPing = true;
  private paused = false;

  constructor(
    private readonly socket: Duplex,
    key: string,
    nonce: string,
  ) {
    this.reader = new TerminalFrameReader(key, nonce, "out");
    this.signer = new TerminalFrameSigner(key, nonce, "in");
    socket.on("data", (chunk: Buffer) => this.received(chunk));
    socket.on("error", () => {});
    socket.on("close", () => this.finish(() => this.events?.lost(1006)));
  }

  listen(events: UpstreamEvents): void {
    this.events = events;
    const early = this.early;
    this.early = [];
    for (const frame of early) this.handle(frame);
  }

  received(chunk: Buffer): void {
    if (this.done) return;
    let frames: TerminalFrame[];
    try {
      frames = this.reader.push(chunk);
    } catch (error) {
      if (!(error instanceof BadTerminalFrameError)) throw error;
      // Not the agent's word: whatever else comes on this connection is not trusted either.
      this.socket.destroy();
      return;
    }
    for (const frame of frames) {
      if (this.events) this.handle(frame);
      else this.early.push(frame);
    }
  }

  send(bytes: Uint8Array): void {
    for (let at = 0; at < bytes.length; at += terminalFrameBytes) {
      this.write(terminalFrameTypes.data, bytes.subarray(at, at + terminalFrameBytes));
    }
  }

  resize(size: GuestSize): void {
    this.write(terminalFrameTypes.resize, resizePayload(size));
  }

  pause(): void {
    this.paused = true;
    this.socket.pause();
  }

  resume(): void {
    this.paused = false;
    this.socket.resume();
  }

  heartbeat(): void {
    if (this.paused || this.done) return;
    if (!this.answeredPing) {
      this.socket.destroy();
      return;
    }
    this.answeredPing = false;
    this.write(terminalFrameTypes.ping);
  }

  close(): void {
    this.closing = true;
    // The agent ends the shell when its connection closes: nothing is left running for nobody.
    this.socket.destroy();
  }

  private handle(frame: TerminalFrame): void {
    if (this.done) return;
    switch (frame.type) {
      case terminalFrameTypes.data:
        return this.events?.output(frame.payload);
      case terminalFrameTypes.pong:
        this.answeredPing = true;
        return;
      case terminalFrameTypes.exit:
        return this.finish(() => this.events?.ended(notices.shellExited(exitText(frame.payload))));
      default:
        this.socket.destroy();
    }
  }

  private write(type: number, payload?: Uint8Array): void {
    if (!this.done && !this.socket.destroyed) this.socket.write(this.signer.frame(type, payload));
  }

  /** The first of exit and close decides; after our own close() nobody is told. */
  private finish(tell: () => void): void {
    if (this.done) return;
    this.done = true;
    if (!this.closing) tell();
    this.socket.destroy();
  }
}

function exitText(payload: Buffer): string {
  try {
    const exit = JSON.parse(payload.toString("utf8")) as ShellExit;
    if (typeof exit.signal === "string") return exit.signal;
    if (typeof exit.exitCode === "number") return String(exit.exitCode);
  } catch {
    // An exit it could not describe is still an exit.
  }
  return "unknown";
}

type UpgradeAnswer =
  | { kind: "upgraded"; response: IncomingMessage; socket: Duplex; head: Buffer }
  | { kind: "refused"; response: IncomingMessage };

function upgradeOf(
  request: ReturnType<typeof httpRequest>,
  deadline: AbortSignal,
  signal: AbortSignal,
): Promise<UpgradeAnswer> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      request.destroy();
      if (signal.aborted) reject(signal.reason);
      else reject(new UpstreamRefusedError(notices.terminalUnreachable("it did not answer in time"), false));
    };
    deadline.addEventListener("abort", onAbort, { once: true });
    const settle = () => deadline.removeEventListener("abort", onAbort);
    request.once("upgrade", (response: IncomingMessage, socket: Duplex, head: Buffer) => {
      settle();
      resolve({ kind: "upgraded", response, socket, head });
    });
    request.once("response", (response: IncomingMessage) => {
      settle();
      resolve({ kind: "refused", response });
    });
    request.once("error", (error) => {
      settle();
      if (signal.aborted) return reject(signal.reason);
      reject(new UpstreamRefusedError(notices.terminalUnreachable(error.message), false));
    });
  });
}

/** The agent's signed no, as the notice the terminal waits or ends with. */
async function refusalOf(
  response: IncomingMessage,
  key: string,
  nonce: string,
): Promise<UpstreamRefusedError> {
  const status = response.statusCode ?? 0;
  const body = await readSmallAnswer(response).catch(() => undefined);
  if (!body) return new UpstreamRefusedError(notices.terminalUnproven, true);
  if (!verifyAgentAnswer(key, nonce, status, body, agentMacOf(response))) {
    // An agent without the key yet (still starting) or another program: wait and ask again.
    return new UpstreamRefusedError(notices.terminalUnreachable(`HTTP ${status}, not signed`), false);
  }
  const parsed = AgentErrorBody.safeParse(parseJson(body));
  const code = parsed.success ? parsed.data.error.code : "";
  // An agent from before terminals knows no such path.
  if (status === 404) return new UpstreamRefusedError(notices.terminalAgentTooOld, true);
  if (code === "too_many_terminals") return new UpstreamRefusedError(notices.tooManyTerminals, true);
  const message = parsed.success ? parsed.data.error.message : `HTTP ${status}`;
  return new UpstreamRefusedError(notices.terminalRefused(message), true);
}

function reasonOf(error: unknown): string {
  if (error instanceof AgentUnreachableError) return error.message;
  return error instanceof Error ? error.message : String(error);
}
