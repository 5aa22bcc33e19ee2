// One browser's websocket to a VM's screen: its RFB session with the BFF, what it has not been sent
// yet, how fast it may send, and whether it still answers. The shared screen decides what reaches
// the VM; the viewer only reports and sends.
//
// Frames go out only when the viewer asked for one (noVNC asks again as soon as it has taken the
// last in): a viewer on a slow line asks seldom, and what changed meanwhile waits in its dirty
// region, merged, so it gets the newest pixels in one frame instead of every frame late. A viewer
// that is up to date gets the update every such viewer gets, encoded once (SharedFrame).
import type WebSocket from "ws";
import type { RawData } from "ws";
import { ScreenClientMessage, type ScreenServerMessage } from "../../common/screen-protocol.ts";
import type { Area, Image } from "../../common/png.ts";
import type { ConsoleLimits } from "./limits.ts";
import { endedMessage, type Notice } from "./notices.ts";
import { TokenBucket } from "./token-bucket.ts";
import type { ViewerIdentity } from "./viewer.ts";
import { DirtyRegion } from "../screen/dirty-region.ts";
import { RfbServerSession, type ViewerMessage } from "../screen/rfb-server.ts";
import {
  encodeResize,
  encodeUpdate,
  formatKey,
  formatWith,
  initialFormat,
  type ViewerFormat,
} from "../screen/screen-encoding.ts";
import { toBuffer } from "./upstream.ts";

export interface ScreenViewerEvents {
  /** The RFB handshake is done: the viewer wants the whole screen. */
  ready(viewer: ScreenViewer): void;
  /** Keys and pointer: the shared screen decides whether they reach the VM. */
  input(viewer: ScreenViewer, message: Extract<ViewerMessage, { type: "key" | "pointer" }>): void;
  control(viewer: ScreenViewer, message: ScreenClientMessage): void;
  closed(viewer: ScreenViewer): void;
}

/** One update of the screen, encoded at most once for each format that asks for it. */
export class SharedFrame {
  private readonly encoded = new Map<string, Buffer>();

  constructor(
    private readonly screen: Image,
    readonly rects: readonly Area[],
  ) {}

  for(format: ViewerFormat): Buffer {
    const key = formatKey(format);
    let bytes = this.encoded.get(key);
    if (!bytes) {
      bytes = encodeUpdate(this.screen, this.rects, format);
      this.encoded.set(key, bytes);
    }
    return bytes;
  }
}

const maxControlMessageChars = 16 * 1024;
/** Frames waiting in a viewer's socket above which no more are made for it, and how often it is looked at again. */
const maxBufferedBytes = 1024 * 1024;
const drainCheckMs = 50;

export class ScreenViewer {
  private readonly rfb: RfbServerSession;
  private format: ViewerFormat = initialFormat;
  private readonly dirty = new DirtyRegion();
  /** The one update this viewer has not been sent, while it missed only that one. */
  private missed: SharedFrame | undefined;
  private wantsUpdate = false;
  /** The screen size this viewer was last told (in ServerInit or a resize). */
  private knownSize = { width: 0, height: 0 };
  private ready = false;
  private answeredPing = true;
  private closed = false;
  private reportedClosed = false;
  private readonly input: TokenBucket;
  private readonly controls: TokenBucket;
  private resumeReading: NodeJS.Timeout | undefined;
  private drainTimer: NodeJS.Timeout | undefined;
  private readonly wholeScreens = new TokenBucket(4, 2);
  /** Bytes of frames sent, for the bench and the metrics. */
  bytesSent = 0;

  constructor(
    private readonly socket: WebSocket,
    readonly identity: ViewerIdentity,
    private readonly limits: ConsoleLimits,
    private readonly screen: () => Image & { name: string },
    private readonly events: ScreenViewerEvents,
  ) {
    this.input = new TokenBucket(limits.inputBurstBytes, limits.inputBytesPerSecond);
    this.controls = new TokenBucket(limits.controlBurst, limits.controlPerSecond);
    this.rfb = new RfbServerSession((bytes) => this.sendBinary(bytes), {
      serverInit: () => {
        const { width, height, name } = this.screen();
        this.knownSize = { width, height };
        return { width, height, name };
      },
      message: (message) => this.rfbMessage(message),
      failed: (reason) => this.closeWith(1002, reason),
    });
    socket.on("message", (data, isBinary) => this.receive(data, isBinary));
    socket.on("pong", () => {
      this.answeredPing = true;
    });
    socket.on("error", () => {});
    socket.on("close", () => this.markClosed());
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  send(message: ScreenServerMessage): void {
    if (!this.closed) this.socket.send(JSON.stringify(message));
  }

  /** The screen changed: this frame now if the viewer waits for one and missed nothing, else later. */
  changed(frame: SharedFrame): void {
    if (!this.ready) return;
    const { width, height } = this.screen();
    const upToDate =
      this.dirty.isEmpty &&
      !this.missed &&
      this.knownSize.width === width &&
      this.knownSize.height === height;
    if (upToDate && this.wantsUpdate) {
      this.wantsUpdate = false;
      this.sendBinary(frame.for(this.format));
    } else if (upToDate) {
      // One frame behind: its request gets that frame as every viewer got it, encoded once.
      this.missed = frame;
    } else {
      this.dirty.add(frame.rects);
      this.flush();
    }
  }

  heartbeat(): void {
    if (this.closed) return;
    if (!this.answeredPing) {
      this.socket.terminate();
      return;
    }
    this.answeredPing = false;
    this.socket.ping();
  }

  /** Closes with a final message: reconnecting will not help. */
  end(notice: Notice): void {
    if (this.closed) return;
    this.send(endedMessage(notice) as ScreenServerMessage);
    this.closeWith(1000, "ended");
  }

  /** Closes without an "ended": the browser reconnects (the BFF is going away, or another replica holds the screen). */
  goAway(): void {
    this.closeWith(1001, "going away");
  }

  private rfbMessage(message: ViewerMessage): void {
    switch (message.type) {
      case "pixel-format":
        this.format = { ...this.format, layout: message.layout };
        return;
      case "encodings":
        this.format = formatWith(this.format.layout, message.encodings);
        if (!this.ready) {
          this.ready = true;
          this.events.ready(this);
        }
        return;
      case "update-request":
        if (!this.ready) {
          // A client that never sent SetEncodings gets Raw (RFC 6143 7.5.2).
          this.ready = true;
          this.events.ready(this);
        }
        // The whole screen, but a few times a second at most: each costs a PNG of all of it, and a
        // browser could ask thousands of times in one frame. Past that it gets what changed.
        if (!message.incremental && this.wholeScreens.take(1) === 0 && !this.missedIsWholeScreen()) {
          if (this.missed) this.dirty.add(this.missed.rects);
          this.missed = undefined;
          this.dirty.add([{ x: 0, y: 0, ...this.knownSize }]);
        }
        this.wantsUpdate = true;
        this.flush();
        return;
      default:
        this.events.input(this, message);
    }
  }

  /** A joining viewer's missed update is the whole screen, which its first request asks for anyway. */
  private missedIsWholeScreen(): boolean {
    const rect = this.missed?.rects.length === 1 ? this.missed.rects[0] : undefined;
    return (
      this.dirty.isEmpty &&
      rect !== undefined &&
      rect.x === 0 &&
      rect.y === 0 &&
      rect.width === this.knownSize.width &&
      rect.height === this.knownSize.height
    );
  }

  /**
   * Sends what is dirty if the viewer asked for a frame: a new size first, then the pixels. Not
   * while frames already wait in its socket (a browser that stopped reading): the changes wait
   * merged in the dirty region instead, and are sent once the socket drained.
   */
  private flush(): void {
    if (!this.wantsUpdate || this.closed || this.drainTimer) return;
    if (this.socket.bufferedAmount > maxBufferedBytes) {
      this.drainTimer = setTimeout(() => {
        this.drainTimer = undefined;
        this.flush();
      }, drainCheckMs);
      return;
    }
    const screen = this.screen();
    const missed = this.missed;
    this.missed = undefined;
    if (
      missed &&
      this.dirty.isEmpty &&
      screen.width === this.knownSize.width &&
      screen.height === this.knownSize.height
    ) {
      this.wantsUpdate = false;
      this.sendBinary(missed.for(this.format));
      return;
    }
    if (missed) this.dirty.add(missed.rects);
    if (screen.width !== this.knownSize.width || screen.height !== this.knownSize.height) {
      const resize = encodeResize(screen.width, screen.height, this.format);
      this.knownSize = { width: screen.width, height: screen.height };
      this.dirty.add([{ x: 0, y: 0, width: screen.width, height: screen.height }]);
      if (resize) {
        // The resize answers this request; the pixels answer the next.
        this.wantsUpdate = false;
        this.sendBinary(resize);
        return;
      }
    }
    if (this.dirty.isEmpty) return;
    const rects = this.dirty.take(screen.width, screen.height);
    this.wantsUpdate = false;
    this.sendBinary(encodeUpdate(screen, rects, this.format));
  }

  private sendBinary(bytes: Buffer): void {
    if (this.closed) return;
    this.bytesSent += bytes.length;
    this.socket.send(bytes, { binary: true });
  }

  private receive(data: RawData, isBinary: boolean): void {
    if (this.closed) return;
    const bytes = toBuffer(data);
    this.throttleInput(bytes.length);
    if (isBinary) {
      this.rfb.receive(bytes);
      return;
    }
    const waitMs = this.controls.take(1);
    if (waitMs > (this.limits.controlFloodCloseAfter / this.limits.controlPerSecond) * 1000) {
      this.closeWith(1008, "too many control messages");
      return;
    }
    const message = parseClientMessage(bytes);
    if (waitMs === 0 && message) this.events.control(this, message);
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

  private closeWith(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.close(code, reason);
    // A browser that never answers the close frame must not keep the socket alive.
    setTimeout(() => this.socket.terminate(), 5_000).unref();
    this.markClosed();
  }

  private markClosed(): void {
    this.closed = true;
    clearTimeout(this.resumeReading);
    clearTimeout(this.drainTimer);
    if (this.reportedClosed) return;
    this.reportedClosed = true;
    this.events.closed(this);
  }
}

function parseClientMessage(bytes: Buffer): ScreenClientMessage | undefined {
  if (bytes.length > maxControlMessageChars) return undefined;
  try {
    const parsed = ScreenClientMessage.safeParse(JSON.parse(bytes.toString("utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
