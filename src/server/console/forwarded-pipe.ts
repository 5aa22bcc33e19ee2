// A browser's console socket joined to the replica holding its console (placement.ts decides when):
// frames pass both ways untouched and a close on one side closes the other the same way, so screen
// replay, acks, the keyboard and close codes all stay the holder's business. This replica only
// pings the browser and stops reading the holder while the browser falls behind.
import WebSocket, { type RawData } from "ws";
import { endedMessage, type Notice } from "./notices.ts";

// A browser socket's send buffer beyond which the holder's frames stop being read, and below
// which reading resumes: the holder's own flow control then sees the browser as behind.
const pipeHighWatermark = 1024 * 1024;
const pipeLowWatermark = 256 * 1024;

/**
 * The socket to the holder, keeping what it sends before the browser's handshake is done: the
 * holder greets a new viewer at once (status, keyboard, the screen), and none of that may be lost.
 */
export class HolderSocket {
  private early: { data: RawData; isBinary: boolean }[] | undefined = [];
  private readonly keep = (data: RawData, isBinary: boolean) => this.early?.push({ data, isBinary });

  constructor(readonly socket: WebSocket) {
    socket.on("message", this.keep);
    socket.on("error", () => undefined);
  }

  /** Hands what arrived so far to `deliver`, then everything that follows. */
  deliverTo(deliver: (data: RawData, isBinary: boolean) => void): void {
    this.socket.off("message", this.keep);
    for (const frame of this.early ?? []) deliver(frame.data, frame.isBinary);
    this.early = undefined;
    this.socket.on("message", deliver);
  }
}

/** One browser's console socket forwarded to the holder: frames both ways, closes mirrored. */
export class ForwardedPipe {
  private answeredPing = true;
  private closed = false;
  private readonly closedListeners: (() => void)[] = [];

  private readonly upstream: WebSocket;

  constructor(
    private readonly browser: WebSocket,
    holder: HolderSocket,
    readonly signInId: string,
  ) {
    const upstream = holder.socket;
    this.upstream = upstream;
    browser.on("message", (data: RawData, isBinary: boolean) => {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
    });
    holder.deliverTo((data, isBinary) => this.toBrowser(data, isBinary));
    browser.on("pong", () => {
      this.answeredPing = true;
    });
    browser.on("error", () => undefined);
    browser.on("close", (code: number, reason: Buffer) => this.closeBoth(upstream, code, reason));
    upstream.on("close", (code: number, reason: Buffer) => this.closeBoth(browser, code, reason));
    // The holder went away during the browser's handshake: the browser reconnects and looks again.
    if (upstream.readyState !== WebSocket.OPEN) this.closeBoth(browser, 1006, Buffer.alloc(0));
  }

  onClosed(listener: () => void): void {
    this.closedListeners.push(listener);
  }

  heartbeat(): void {
    if (!this.answeredPing) {
      this.browser.terminate();
      return;
    }
    this.answeredPing = false;
    this.browser.ping();
  }

  end(notice: Notice): void {
    if (this.browser.readyState === WebSocket.OPEN) this.browser.send(JSON.stringify(endedMessage(notice)));
    this.browser.close(1000, "console ended");
  }

  goAway(): void {
    this.browser.close(1001, "server shutting down");
  }

  private toBrowser(data: RawData, isBinary: boolean): void {
    const { browser, upstream } = this;
    if (browser.readyState !== WebSocket.OPEN) return;
    browser.send(data, { binary: isBinary }, () => {
      if (upstream.isPaused && browser.bufferedAmount < pipeLowWatermark) upstream.resume();
    });
    if (!upstream.isPaused && browser.bufferedAmount > pipeHighWatermark) upstream.pause();
  }

  /** The other side closes the way this one did; a close without a code (1005, 1006) is cut the same way. */
  private closeBoth(other: WebSocket, code: number, reason: Buffer): void {
    if (!this.closed) {
      this.closed = true;
      for (const listener of this.closedListeners) listener();
    }
    if (other.readyState === WebSocket.CLOSED) return;
    if (code === 1005) other.close();
    else if (code === 1006 || code === 1015 || code === 1004) other.terminate();
    else other.close(code, reason);
  }
}
