// A lab's extra terminals: a shell on a real PTY inside the VM, opened by its agent (GET
// /v1/terminal, docs/agent.md "Terminals") over the same port-forward and key as grading. The line
// carries signed frames both ways (terminal-frames.ts); it has a window size of its own, so a fit
// is a frame on the line and nothing is typed. A console shows it as it shows the serial console.
import { request as httpRequest, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import * as z from "zod/mini";
import { AgentErrorBody } from "../../common/grading.ts";
import type { GuestSize } from "../console/guest-size.ts";
import { notices, type Notice } from "../console/notices.ts";
import type { OpenTerminal, TerminalLine } from "../console/terminal-line.ts";
import { UpstreamRefusedError, type UpstreamEvents } from "../console/upstream.ts";
import type { ConnectToAgent } from "../agent/client.ts";
import { agentMacOf, parseJson, readSmallAnswer } from "../agent/answer.ts";
import { signAgentRequest, verifyAgentAnswer } from "../agent/signature.ts";
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
    throw await refusalOf(answer.response, key, signed.nonce, deadline);
  };
}

/** The shell's exit as the agent reports it; a signal only by its name. */
const ShellExit = z.object({
  exitCode: z.nullable(z.int()),
  signal: z.nullable(z.string().check(z.regex(/^SIG[A-Z0-9]{1,12}$/))),
});

/**
 * Input the agent has not taken yet, beyond which it is stuck or gone: it reads on while its PTY is
 * full (up to 1 MiB, docs/agent.md), so only an agent that stopped reading gets here.
 */
const maxUnsentBytes = 2 * 1024 * 1024;

class AgentTerminalLine implements TerminalLine {
  private readonly reader: TerminalFrameReader;
  private readonly signer: TerminalFrameSigner;
  private events: UpstreamEvents | undefined;
  /** What arrived, and how the line ended, before anyone listened. */
  private early: TerminalFrame[] = [];
  private endedEarly: Notice | undefined;
  private closing = false;
  private done = false;
  /** Any frame since the last ping: the agent is there. */
  private heard = true;
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
    // The agent hangs the shell up when its connection goes: a dropped line is a shell gone, and a
    // new one would be another shell behind the same screen. The terminal ends, saying so.
    socket.on("close", () => this.finish(notices.terminalDropped));
  }

  listen(events: UpstreamEvents): void {
    this.events = events;
    const early = this.early;
    this.early = [];
    for (const frame of early) this.handle(frame);
    if (this.endedEarly) events.ended(this.endedEarly);
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
    if (frames.length > 0) this.heard = true;
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

  /**
   * Pings, also while paused (the agent ends a terminal it has not heard from for 90 s); a line the
   * agent sent nothing on since the last ping is cut, but only while it is read.
   */
  heartbeat(): void {
    if (this.done) return;
    if (!this.paused) {
      if (!this.heard) {
        this.socket.destroy();
        return;
      }
      this.heard = false;
    }
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
        return;
      case terminalFrameTypes.exit:
        return this.finish(notices.shellExited(exitText(frame.payload)));
      default:
        this.socket.destroy();
    }
  }

  private write(type: number, payload?: Uint8Array): void {
    if (this.done || this.socket.destroyed) return;
    if (this.socket.writableLength > maxUnsentBytes) {
      this.socket.destroy();
      return;
    }
    this.socket.write(this.signer.frame(type, payload));
  }

  /** The first of exit and close decides; after our own close() nobody is told. */
  private finish(notice: Notice): void {
    if (this.done) return;
    this.done = true;
    if (!this.closing) {
      if (this.events) this.events.ended(notice);
      else this.endedEarly = notice;
    }
    this.socket.destroy();
  }
}

function exitText(payload: Buffer): string {
  const exit = ShellExit.safeParse(parseJson(payload));
  if (exit.success && exit.data.signal !== null) return exit.data.signal;
  if (exit.success && exit.data.exitCode !== null) return String(exit.data.exitCode);
  return "unknown";
}

const maxRefusalLength = 200;

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
  deadline: AbortSignal,
): Promise<UpstreamRefusedError> {
  const status = response.statusCode ?? 0;
  const onAbort = () => response.destroy();
  deadline.addEventListener("abort", onAbort, { once: true });
  const body = await readSmallAnswer(response)
    .catch(() => undefined)
    .finally(() => deadline.removeEventListener("abort", onAbort));
  if (!body) return new UpstreamRefusedError(notices.terminalUnreachable("its answer did not arrive"), false);
  if (!verifyAgentAnswer(key, nonce, status, body, agentMacOf(response))) {
    // An agent without the key yet (still starting) or another program: wait and ask again.
    return new UpstreamRefusedError(notices.terminalUnreachable(`HTTP ${status}, not signed`), false);
  }
  const parsed = AgentErrorBody.safeParse(parseJson(body));
  const code = parsed.success ? parsed.data.error.code : "";
  // An agent from before terminals knows no such path.
  if (status === 404) return new UpstreamRefusedError(notices.terminalAgentTooOld, true);
  // Slots come free as other terminals close: try again, backing off.
  if (code === "too_many_terminals") return new UpstreamRefusedError(notices.tooManyTerminals, false);
  // Said to staff too: the agent's words, but no more of them than a sentence.
  const message = parsed.success ? parsed.data.error.message.slice(0, maxRefusalLength) : `HTTP ${status}`;
  return new UpstreamRefusedError(notices.terminalRefused(message), true);
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
