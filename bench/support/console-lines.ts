// The console as bench/console.ts and its observers' process (console-observers.ts) use it, whichever
// way it is connected: straight to the emulator's console subresource, through the bare pipe
// (bare-pipe.ts), or through the BFF as the SPA connects. The clients only count bytes, and
// acknowledge them as the SPA does once xterm.js has written them.
import { randomBytes } from "node:crypto";
import type { KubeConfig } from "@kubernetes/client-node";
import WebSocket from "ws";
import { consoleAckBytes, ConsoleServerMessage } from "../../src/common/console-protocol.ts";
import { openBrowserSocket } from "../../src/server/testing/browser-socket.ts";
import type { BffMessage } from "../console-bff.ts";
import { openBenchConsole } from "./bench-cluster.ts";
import type { BffProcess } from "./bff-process.ts";

export type ConsoleBff = BffProcess<BffMessage>;

/** A console as the bench uses it, whichever way it is connected. */
export interface Line {
  send(text: string): void;
  onData(listener: (chunk: Buffer) => void): () => void;
  /** Resolves once the socket is closed. */
  close(): Promise<void>;
}

function lineOf(socket: WebSocket, afterData: (bytes: number) => void = () => {}): Line {
  const listeners = new Set<(chunk: Buffer) => void>();
  socket.on("message", (data: Buffer, isBinary) => {
    if (!isBinary) return;
    for (const listener of listeners) listener(data);
    afterData(data.length);
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return {
    send: (text) => socket.send(Buffer.from(text, "utf8"), { binary: true }),
    onData(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      socket.close();
      return closed;
    },
  };
}

/** Straight to the emulator's console subresource with the admin's credentials, as virtctl would. */
export async function openDirect(kubeConfig: KubeConfig, vmiName: string): Promise<Line> {
  return lineOf(await openBenchConsole(kubeConfig, vmiName));
}

/** Through the bare pipe (bare-pipe.ts): open once its own line to the VM's console is. */
export async function openBare(barePipeUrl: string, vmiName: string): Promise<Line> {
  const socket = new WebSocket(`${barePipeUrl}/${encodeURIComponent(vmiName)}`, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  return lineOf(socket);
}

export interface RelayLine {
  line: Line;
  socket: WebSocket;
  /** Resolves once a control message matching `accept` arrived (from the start of the socket). */
  until(accept: (message: ConsoleServerMessage) => boolean): Promise<void>;
  /** Screens replayed since the first: the BFF skipped output this client was too slow for. */
  catchUps(): number;
}

type EndedMessage = Extract<ConsoleServerMessage, { type: "ended" }>;

/** The BFF ended the console at once (too many windows, reopened too often) or later. */
export class ConsoleEndedError extends Error {
  constructor(readonly ended: EndedMessage) {
    super(`console ended: ${JSON.stringify(ended)}`);
  }
}

export interface RelayOptions {
  mode?: "observe";
  terminal?: number;
  /**
   * Refused as reopened too often (the attach allowance per person and console): wait as long as the
   * BFF says, then open again, as a reloaded page would. Otherwise the refusal rejects.
   */
  patient?: boolean;
}

/** Through the BFF, as the SPA connects: cookie, Origin, and acks (every 32 KiB or when idle). */
export async function openRelay(
  bffUrl: string,
  cookie: string,
  sessionId: string,
  options: RelayOptions = {},
): Promise<RelayLine> {
  for (;;) {
    try {
      return await openRelayOnce(bffUrl, cookie, sessionId, options);
    } catch (error) {
      const notice = error instanceof ConsoleEndedError ? error.ended.notice : undefined;
      if (!options.patient || notice?.reason !== "reopened_too_often") throw error;
      const seconds = Number(notice.params.seconds ?? 1);
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    }
  }
}

async function openRelayOnce(
  bffUrl: string,
  cookie: string,
  sessionId: string,
  { mode, terminal }: RelayOptions,
): Promise<RelayLine> {
  const which = terminal === undefined ? "console" : `terminals/${terminal}`;
  const socket = openBrowserSocket(
    bffUrl,
    `/api/sessions/${sessionId}/${which}${mode ? "?mode=observe" : ""}`,
    { cookie },
  );
  let unacked = 0;
  let flushScheduled = false;
  const ack = () => {
    flushScheduled = false;
    if (unacked === 0 || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify({ type: "ack", bytes: unacked }));
    unacked = 0;
  };
  const line = lineOf(socket, (bytes) => {
    unacked += bytes;
    if (unacked >= consoleAckBytes) ack();
    else if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(ack);
    }
  });
  const messages: ConsoleServerMessage[] = [];
  const waiters = new Set<() => void>();
  socket.on("message", (data: Buffer, isBinary) => {
    if (isBinary) return;
    messages.push(ConsoleServerMessage.parse(JSON.parse(data.toString("utf8"))));
    for (const check of [...waiters]) check();
  });
  const until = (accept: (message: ConsoleServerMessage) => boolean) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        const ended = messages.find((message) => message.type === "ended");
        if (ended) reject(new ConsoleEndedError(ended));
        else if (!messages.some(accept)) return;
        else resolve();
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
    socket.once("unexpected-response", (_request, response) =>
      reject(new Error(`the BFF refused the console: HTTP ${response.statusCode}`)),
    );
  });
  // A console that never connects fails the bench rather than hanging it.
  const within = (work: Promise<void>, what: string) =>
    Promise.race([
      work,
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`${which} of ${sessionId}: no ${what} within 60 s`)),
          60_000,
        ).unref(),
      ),
    ]);
  await within(
    until((message) => message.type === "replay-end"),
    "replay",
  );
  await within(
    until((message) => message.type === "status" && message.state === "connected"),
    "connection",
  );
  const catchUps = () => messages.filter((message) => message.type === "replay-begin").length - 1;
  return { line, socket, until, catchUps };
}

/** Resolves once the BFF has no more than `count` viewers (a closed socket is gone on its side too). */
export async function viewersDownTo(bff: ConsoleBff, count: number): Promise<void> {
  while ((await bff.ask("stats", "stats")).consoles.viewers > count);
}

/**
 * Resolves once the stream shows `pattern` in what arrives from now on. Only the ends of each chunk
 * are searched (decoding all of it would slow the client down): every pattern waited for here is the
 * last thing printed.
 */
export function waitForText(line: Line, pattern: RegExp | string, timeoutMs = 120_000): Promise<number> {
  return new Promise((resolve, reject) => {
    let tail = "";
    let received = 0;
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`timed out waiting for ${String(pattern)}; last output: ${JSON.stringify(tail)}`));
    }, timeoutMs);
    const stop = line.onData((chunk) => {
      received += chunk.length;
      const seen = tail + chunk.subarray(0, 256).toString("latin1");
      const end = chunk.length > 256 ? chunk.subarray(-256).toString("latin1") : "";
      tail = (end || seen).slice(-256);
      const matches = (text: string) =>
        typeof pattern === "string" ? text.includes(pattern) : pattern.test(text);
      if (matches(seen) || (end !== "" && matches(end))) {
        clearTimeout(timer);
        stop();
        resolve(received);
      }
    });
  });
}

export const prompt = /\$ $/;

/** Gets a fresh prompt, so nothing earlier is still arriving when a measurement starts. */
export async function atPrompt(line: Line): Promise<void> {
  const shown = waitForText(line, prompt, 30_000);
  line.send("\r");
  await shown;
}

/** Keys typed one at a time (a letter, then a backspace), each timed until its echo comes back. */
export async function echoLatencies(line: Line, count: number): Promise<number[]> {
  await atPrompt(line);
  const samples: number[] = [];
  const warmup = 20;
  for (let index = 0; index < count + warmup; index += 1) {
    const echoed = new Promise<void>((resolve) => {
      const stop = line.onData(() => {
        stop();
        resolve();
      });
    });
    const started = performance.now();
    // A letter, then a backspace: the line never grows.
    line.send(index % 2 === 0 ? "x" : "\x7f");
    await echoed;
    if (index >= warmup) samples.push(performance.now() - started);
  }
  return samples;
}

export interface Run {
  /** What arrived on the wire from Enter to the end marker, and how long that took. */
  bytes: number;
  seconds: number;
  /** CPU ms of the relay's process over the same span (0 when no relay was measured). */
  cpuMs: number;
}

/**
 * Runs `command` in the guest's shell and waits for its end marker. `cpuMs` (the relay's CPU so far)
 * is read once the prompt is back and once the marker arrived, so connecting is not counted.
 */
export async function timedRun(
  line: Line,
  command: string,
  cpuMs: () => Promise<number> = async () => 0,
): Promise<Run> {
  await atPrompt(line);
  const nonce = randomBytes(4).toString("hex");
  const done = waitForText(line, `tp-done-${nonce}`);
  const cpuBefore = await cpuMs();
  const started = performance.now();
  // The echoed command reads tp-done''-..., so only the shell's output matches.
  line.send(`${command}; echo tp-done''-${nonce}\r`);
  const bytes = await done;
  const seconds = (performance.now() - started) / 1000;
  return { bytes, seconds, cpuMs: (await cpuMs()) - cpuBefore };
}
