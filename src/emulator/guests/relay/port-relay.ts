// The emulator's side of a guest's port relay (port-relay.py). The relay runs outside the guest's
// sandbox, in the guest's network namespace only, so no guest process can reach it; still, nothing it
// sends is trusted, and it talks over plain pipes that this file parses itself, never over Node's IPC
// channel, where one malformed message would throw inside Node and end the emulator and every guest
// with it. Its stdout may say one thing, "ready", once; each connection's answer is one short line,
// "ok" or "error CODE MESSAGE", before the guest's bytes. Anything else ends the relay (on its stdout)
// or that one connection (an answer), with a warning in the log: the guest loses at most its
// port-forwarding, never the emulator.
import { spawn, type ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import net from "node:net";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { HOST_PYTHON } from "../boot/boot-files.ts";
import { RELAY_UID } from "../isolation/sandbox.ts";

const relayScript = fileURLToPath(new URL("./port-relay.py", import.meta.url));
/** "ready\n" is all the control channel ever carries. */
const controlMax = 64;
/** "error ECODE " and the relay's message, which it cuts to 400 characters. */
const answerMax = 512;
const stderrTailMax = 2000;
/** The kernel's limit for a Unix socket's path (sun_path, less its NUL). */
export const socketPathMax = 107;

export interface PortRelayStart {
  /** An open descriptor of the guest's network namespace (/proc/PID/ns/net); the relay gets a copy. */
  networkNamespaceFd: number;
  /** Where the relay listens: a fresh path in a folder only the emulator's uid may enter. */
  socketPath: string;
  /** The emulator runs as root: the relay then runs as RELAY_UID once it listens. */
  privileged: boolean;
}

type State =
  | { kind: "waiting"; waiters: Set<(error: Error | undefined) => void> }
  | { kind: "ready" }
  | { kind: "ended"; error: Error };

export class PortRelay {
  private readonly guestName: string;
  private state: State = { kind: "waiting", waiters: new Set() };
  private child: ChildProcess | undefined;
  private socketPath: string | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stderrTail = "";

  constructor(guestName: string) {
    this.guestName = guestName;
  }

  start({ networkNamespaceFd, socketPath, privileged }: PortRelayStart): void {
    if (this.state.kind === "ended" || this.child) return;
    this.socketPath = socketPath;
    const child = spawn(
      HOST_PYTHON,
      ["-I", "-S", relayScript, socketPath, privileged ? String(RELAY_UID) : "-"],
      {
        stdio: ["pipe", "pipe", "pipe", networkNamespaceFd],
        env: {},
      },
    );
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once("close", (code, signal) => {
        this.fail(`the port relay exited with ${signal ?? `code ${code}`}${this.stderrSuffix()}`);
        resolve();
      });
      child.once("error", (error) => {
        this.fail(`the port relay could not start: ${error.message}`);
        if (child.pid === undefined) resolve();
      });
    });
    // Nothing is written to it: its end closing is how the relay learns that the emulator is gone.
    child.stdin?.on("error", () => undefined);
    child.stderr?.setEncoding("latin1").on("data", (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-stderrTailMax);
    });
    readControl(child.stdout as Readable, (line) => this.onControl(line));
  }

  /** The relay could not be started at all (no network namespace to give it). */
  failToStart(reason: string): void {
    this.fail(`the port relay could not start: ${reason}`);
  }

  /**
   * A TCP connection to `port` on the guest's loopback, through the relay. Rejects with the code the
   * relay answered (ECONNREFUSED when nothing listens), ETIMEDOUT after `timeoutMs`, or EIO when the
   * relay is gone or answered something else than an answer.
   */
  connect(port: number, timeoutMs: number): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      let socket: net.Socket | undefined;
      let settled = false;
      const settle = (outcome: net.Socket | Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (outcome instanceof Error) {
          socket?.destroy();
          reject(outcome);
        } else {
          resolve(outcome);
        }
      };
      const timer = setTimeout(
        () => settle(relayError("ETIMEDOUT", `the port relay of guest ${this.guestName} did not answer`)),
        timeoutMs,
      );
      this.whenReady((error) => {
        if (error) return settle(error);
        if (settled || !this.socketPath) return;
        socket = net.connect({ path: this.socketPath });
        socket.once("connect", () => socket?.write(`${port}\n`));
        readAnswer(socket, (answer) => {
          if (answer.kind === "ok") return settle(socket as net.Socket);
          // Stopped meanwhile (the guest ended): that, not the cut connection, is what went wrong.
          if (this.state.kind === "ended") return settle(this.state.error);
          if (answer.kind === "error") return settle(this.answeredError(port, answer.code, answer.message));
          this.warn(`a connection to port ${port} failed: the port relay ${answer.reason}`);
          settle(
            relayError(
              "EIO",
              `connecting to port ${port} in guest ${this.guestName}: the port relay ${answer.reason}`,
            ),
          );
        });
      });
    });
  }

  /** Ends the relay; what waits for it, and later connects, fail with `error`. Resolves once it has exited. */
  async stop(error: Error): Promise<void> {
    if (this.state.kind !== "ended") this.end(error);
    this.child?.kill("SIGKILL");
    await this.exited;
    if (this.socketPath) await rm(this.socketPath, { force: true });
  }

  private answeredError(port: number, code: string, message: string): Error {
    if (code === "ECONNREFUSED") {
      return relayError(
        code,
        `connection refused: nothing listens on port ${port} in guest ${this.guestName}`,
      );
    }
    return relayError(code, `connecting to port ${port} in guest ${this.guestName}: ${message}`);
  }

  private whenReady(then: (error: Error | undefined) => void): void {
    if (this.state.kind === "ready") then(undefined);
    else if (this.state.kind === "ended") then(this.state.error);
    else this.state.waiters.add(then);
  }

  private onControl(line: Buffer | { tooLong: true }): void {
    if (!(line instanceof Buffer)) {
      return this.fail(`the port relay sent more than ${controlMax} bytes without a line end`);
    }
    if (line.toString("latin1") === "ready" && this.state.kind === "waiting") {
      const { waiters } = this.state;
      this.state = { kind: "ready" };
      for (const waiter of waiters) waiter(undefined);
      return;
    }
    this.fail(`the port relay sent ${describe(line)}`);
  }

  /** The relay failed: say why once, and stop it; the guest keeps running without port-forwarding. */
  private fail(reason: string): void {
    if (this.state.kind === "ended") return;
    this.warn(`${reason}; port-forwarding to this guest has stopped`);
    this.end(relayError("EIO", `port-forwarding to guest ${this.guestName} has stopped: ${reason}`));
    this.child?.kill("SIGKILL");
  }

  private end(error: Error): void {
    const waiters = this.state.kind === "waiting" ? this.state.waiters : new Set<(error: Error) => void>();
    this.state = { kind: "ended", error };
    for (const waiter of waiters) waiter(error);
  }

  private stderrSuffix(): string {
    const tail = this.stderrTail.trim();
    return tail ? `: ${tail}` : "";
  }

  private warn(message: string): void {
    console.warn(`emulator: guest ${this.guestName}: ${message}`);
  }
}

/** At most 60 bytes of what was sent, quoted, control characters and all escaped. */
function describe(bytes: Buffer): string {
  const shown = JSON.stringify(bytes.subarray(0, 60).toString("latin1"));
  return bytes.length > 60 ? `${shown}... (${bytes.length} bytes)` : shown;
}

function relayError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** Complete lines of the relay's stdout, each at most controlMax bytes; a longer one ends the reading. */
function readControl(stream: Readable, onLine: (line: Buffer | { tooLong: true }) => void): void {
  let pending = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk.subarray(0, controlMax + 1)]);
    let newline: number;
    while ((newline = pending.indexOf(0x0a)) !== -1) {
      const line = pending.subarray(0, newline);
      pending = pending.subarray(newline + 1);
      onLine(line);
    }
    if (pending.length > controlMax || chunk.length > controlMax) {
      stream.off("data", onData);
      stream.destroy();
      onLine({ tooLong: true });
    }
  };
  stream.on("data", onData);
  stream.on("error", () => undefined);
}

type Answer =
  { kind: "ok" } | { kind: "error"; code: string; message: string } | { kind: "invalid"; reason: string };

/**
 * Reads the relay's answer line off a fresh connection, then leaves the socket as a plain one to the
 * guest's port: what came after the line is put back, and the stream is neither paused nor flowing, so
 * whoever takes the socket reads it as if it had just connected.
 */
function readAnswer(socket: net.Socket, onAnswer: (answer: Answer) => void): void {
  let received = Buffer.alloc(0);
  let done = false;
  const finish = (answer: Answer, rest?: Buffer) => {
    if (done) return;
    done = true;
    socket.off("readable", onReadable);
    socket.off("end", onEnd);
    socket.off("error", onError);
    if (rest && rest.length > 0) socket.unshift(rest);
    onAnswer(answer);
  };
  const onReadable = () => {
    let chunk: Buffer | null;
    while (!done && (chunk = socket.read() as Buffer | null) !== null) {
      received = Buffer.concat([received, chunk]);
      const newline = received.indexOf(0x0a);
      if (newline !== -1 && newline <= answerMax) {
        return finish(parseAnswer(received.subarray(0, newline)), received.subarray(newline + 1));
      }
      if (received.length > answerMax) {
        return finish({
          kind: "invalid",
          reason: `answered more than ${answerMax} bytes without a line end`,
        });
      }
    }
  };
  const onEnd = () => finish({ kind: "invalid", reason: "closed the connection before answering" });
  const onError = (error: Error) =>
    finish({ kind: "invalid", reason: `could not be reached (${error.message})` });
  socket.on("readable", onReadable);
  socket.once("end", onEnd);
  socket.once("error", onError);
}

function parseAnswer(line: Buffer): Answer {
  const text = line.toString("latin1");
  if (text === "ok") return { kind: "ok" };
  const error = /^error (E[A-Z0-9]{1,31}) ([\x20-\x7e]{0,400})$/.exec(text);
  if (error) return { kind: "error", code: error[1] ?? "EIO", message: error[2] ?? "" };
  return { kind: "invalid", reason: `answered ${describe(line)}` };
}
