// One browser's websocket to a console: what it may do, how far behind it is, how fast it may type,
// and whether it still answers. The shared console decides; the viewer only reports and sends.
import type WebSocket from "ws";
import type { RawData } from "ws";
import type { Role } from "../../common/api.ts";
import {
  ConsoleClientMessage,
  consoleCloseCodes,
  type ConsoleServerMessage,
  type ScreenBlankReason,
} from "../../common/console-protocol.ts";
import type { ConsoleLimits } from "./limits.ts";
import { TokenBucket } from "./token-bucket.ts";
import { endedMessage, type Notice } from "./notices.ts";
import { toBuffer } from "./upstream.ts";

/**
 * owner: the session's student, typing whenever they hold the keyboard (by default they do).
 * staff: a TA or instructor observing; may take the keyboard.
 * watcher: the owner's read-only window (?mode=observe); never types.
 */
export type ViewerAccess = "owner" | "staff" | "watcher";

export interface ViewerIdentity {
  username: string;
  role: Role;
  access: ViewerAccess;
  /** The sign-in the socket belongs to: signing out, or its expiry, closes the socket. */
  signInId: string;
  loginExpiresAt: number;
}

export interface ViewerEvents {
  input(viewer: ConsoleViewer, bytes: Buffer): void;
  control(viewer: ConsoleViewer, message: Exclude<ConsoleClientMessage, { type: "ack" }>): void;
  /** The viewer caught up a little: a paused console may resume. */
  acked(viewer: ConsoleViewer): void;
  closed(viewer: ConsoleViewer): void;
}

const maxControlMessageChars = 1024;
/** The schema's bound on one ack (ConsoleClientMessage). */
const maxAckBytes = 1 << 30;

export class ConsoleViewer {
  /** Bytes of output sent, and acknowledged by the browser as written into its terminal. */
  private sent = 0;
  private acked = 0;
  /** Where the last replay ended in the stream: the watermarks judge live output after it. */
  private replayEnd = 0;
  /** While a replay is being prepared, live output waits here, so it lands after the screen it follows. */
  private queued: Uint8Array[] | undefined = [];
  private queuedBytes = 0;
  /** Too far behind: output is skipped until the next replay brings the viewer up to date. */
  private held = false;
  /**
   * Output gathered for the next frame: fewer, larger frames cost less (each is a write, a TCP
   * segment and an ack from the browser). Sent at the end of this turn of the event loop, or while
   * output flows, a few milliseconds after the frame before (see `limits.flowingFrameIntervalMs`).
   */
  private outgoing: Uint8Array[] = [];
  private outgoingBytes = 0;
  private lastFrameAt = -Infinity;
  private lastFrameBytes = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  /** Output frames sent, and acks received: a browser acks at most once per frame it was sent. */
  private framesSent = 0;
  private acksReceived = 0;
  private flushScheduled = false;
  private answeredPing = true;
  /** Set as soon as either side starts closing: nothing more is sent. */
  private closed = false;
  private reportedClosed = false;
  private readonly input: TokenBucket;
  private readonly controls: TokenBucket;
  private resumeReading: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: WebSocket,
    readonly identity: ViewerIdentity,
    private readonly limits: ConsoleLimits,
    private readonly events: ViewerEvents,
  ) {
    this.input = new TokenBucket(limits.inputBurstBytes, limits.inputBytesPerSecond);
    this.controls = new TokenBucket(limits.controlBurst, limits.controlPerSecond);
    socket.on("message", (data, isBinary) => this.receive(data, isBinary));
    socket.on("pong", () => {
      this.answeredPing = true;
    });
    // "close" always follows an error.
    socket.on("error", () => {});
    socket.on("close", () => this.markClosed());
  }

  /** Output sent or queued that the browser has not confirmed writing into its terminal. */
  get bytesBehind(): number {
    return this.sent + this.queuedBytes - this.acked;
  }

  /** The same, leaving out the last replay: a big screen alone must not count as falling behind. */
  get liveBytesBehind(): number {
    return this.sent + this.queuedBytes - Math.max(this.acked, this.replayEnd);
  }

  get isHeld(): boolean {
    return this.held;
  }

  get isReplaying(): boolean {
    return this.queued !== undefined;
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  send(message: ConsoleServerMessage): void {
    if (this.closed) return;
    // After the output before it, never overtaking it.
    this.flushOutput();
    this.socket.send(JSON.stringify(message));
  }

  output(chunk: Uint8Array): void {
    if (this.closed || this.held) return;
    if (this.queued) {
      this.queued.push(chunk);
      this.queuedBytes += chunk.length;
    } else {
      this.sendBytes(chunk);
    }
  }

  /** Skip output from now on: the viewer is too far behind to be worth sending it all. */
  hold(): void {
    this.held = true;
  }

  /** A replay is coming: queue live output until it is sent. */
  beginReplay(): void {
    this.held = false;
    this.queued ??= [];
  }

  /**
   * The screen so far, then whatever arrived meanwhile; from here on output goes out at once.
   * `blank`: the screen shows nothing, and why (the browser says what to press).
   */
  replay(serializedScreen: string, fresh: boolean, blank?: ScreenBlankReason): void {
    const queued = this.queued;
    if (this.closed || !queued) return;
    this.queued = undefined;
    this.queuedBytes = 0;
    this.send({ type: "replay-begin", fresh });
    this.sendBytes(Buffer.from(serializedScreen, "utf8"));
    this.replayEnd = this.sent;
    this.send(blank ? { type: "replay-end", blank } : { type: "replay-end" });
    for (const chunk of queued) this.sendBytes(chunk);
  }

  /** Pings; a viewer that did not answer the previous ping is cut off. */
  heartbeat(): void {
    if (this.closed) return;
    if (!this.answeredPing) {
      this.socket.terminate();
      return;
    }
    this.answeredPing = false;
    this.socket.ping();
  }

  /** The console is over for this viewer: say why, then close normally. */
  end(notice: Notice): void {
    if (this.closed) return;
    this.send(endedMessage(notice));
    this.closeWith(1000, "console ended");
  }

  /**
   * Cut off a viewer that fell behind; it reconnects and gets the current screen instead. What is
   * still buffered for it is thrown away soon after, so a stuck browser cannot hold memory.
   */
  dropAsTooSlow(): void {
    if (this.closed) return;
    this.closeWith(consoleCloseCodes.tooSlow, "too far behind");
    setTimeout(() => this.socket.terminate(), 1000).unref();
  }

  /** The BFF is shutting down: "going away" tells the browser to reconnect later. */
  goAway(): void {
    if (!this.closed) this.closeWith(1001, "server shutting down");
  }

  private closeWith(code: number, reason: string): void {
    this.socket.close(code, reason);
    this.markClosed();
  }

  private markClosed(): void {
    this.closed = true;
    this.queued = undefined;
    this.queuedBytes = 0;
    this.outgoing = [];
    this.outgoingBytes = 0;
    clearTimeout(this.resumeReading);
    clearTimeout(this.flushTimer);
    if (this.reportedClosed) return;
    this.reportedClosed = true;
    this.events.closed(this);
  }

  private sendBytes(bytes: Uint8Array): void {
    this.sent += bytes.length;
    this.outgoing.push(bytes);
    this.outgoingBytes += bytes.length;
    if (this.outgoingBytes >= this.limits.maxFrameBytes) {
      this.flushOutput();
    } else if (!this.flushScheduled) {
      this.flushScheduled = true;
      // A keystroke's echo after a quiet moment goes at once; a flood's next frame waits a little.
      const { flowingFrameIntervalMs, flowingFrameBytes } = this.limits;
      const wait = this.lastFrameAt + flowingFrameIntervalMs - performance.now();
      if (this.lastFrameBytes >= flowingFrameBytes && wait > 0) {
        this.flushTimer = setTimeout(() => this.flushOutput(), wait);
      } else {
        setImmediate(() => this.flushOutput());
      }
    }
  }

  private flushOutput(): void {
    this.flushScheduled = false;
    clearTimeout(this.flushTimer);
    if (this.outgoingBytes === 0 || this.closed) return;
    this.lastFrameAt = performance.now();
    this.lastFrameBytes = this.outgoingBytes;
    const bytes = this.outgoing.length === 1 ? this.outgoing[0]! : Buffer.concat(this.outgoing);
    this.outgoing = [];
    this.outgoingBytes = 0;
    for (let offset = 0; offset < bytes.length; offset += this.limits.maxFrameBytes) {
      this.socket.send(bytes.subarray(offset, offset + this.limits.maxFrameBytes), { binary: true });
      this.framesSent += 1;
    }
  }

  private receive(data: RawData, isBinary: boolean): void {
    if (this.closed) return;
    const bytes = toBuffer(data);
    if (isBinary) {
      this.throttleInput(bytes.length);
      this.events.input(this, bytes);
      return;
    }
    const message = parseClientMessage(bytes);
    // Acks follow output, at most one a frame: those are free, or a console printing fast would
    // spend its owner's typing budget on them and hold back the Ctrl-C behind them. Every other
    // frame spends the budget, acks past one a frame too, so no kind of frame is a way around it.
    if (message?.type === "ack") {
      this.acksReceived += 1;
      if (this.acksReceived > this.framesSent) this.throttleInput(bytes.length);
      this.acked = Math.min(this.sent, this.acked + message.bytes);
      this.events.acked(this);
      return;
    }
    this.throttleInput(bytes.length);
    // Acks follow output; anything else comes from the person (or a script), and each may cost
    // the shared event loop real work: a few per second, then they are dropped, then the socket.
    const waitMs = this.controls.take(1);
    if (waitMs > (this.limits.controlFloodCloseAfter / this.limits.controlPerSecond) * 1000) {
      this.closeWith(1008, "too many control messages");
    } else if (waitMs === 0 && message) {
      this.events.control(this, message);
    }
  }

  // Past the limit, stop reading the socket until the debt is paid: nothing typed is lost.
  private throttleInput(bytes: number): void {
    const waitMs = this.input.take(bytes);
    if (waitMs === 0 || this.socket.isPaused) return;
    this.socket.pause();
    this.resumeReading = setTimeout(() => {
      if (!this.closed) this.socket.resume();
    }, waitMs);
  }
}

/** An ack as the SPA writes it: one for every frame of a flood, so read without the schema's cost. */
const plainAck = /^\{"type":"ack","bytes":([1-9]\d{0,9})\}$/;

function parseClientMessage(bytes: Buffer): ConsoleClientMessage | undefined {
  if (bytes.length > maxControlMessageChars) return undefined;
  const ack = bytes.length <= 40 ? plainAck.exec(bytes.toString("latin1")) : null;
  if (ack && Number(ack[1]) <= maxAckBytes) return { type: "ack", bytes: Number(ack[1]) };
  try {
    const parsed = ConsoleClientMessage.safeParse(JSON.parse(bytes.toString("utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
