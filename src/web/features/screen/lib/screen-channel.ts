// The WebSocket-like object noVNC's RFB is given instead of a URL. The screen's websocket carries two
// things: binary frames are RFB (the BFF is the VNC server), text frames are the JSON messages of
// common/screen-protocol.ts. This channel splits them: noVNC sees only the binary frames, as if it
// had the socket to itself, and the text frames go to the screen's own handler. noVNC's Websock
// (core/websock.js, attach) checks that a channel has send, close, binaryType, onerror, onmessage,
// onopen, protocol and readyState, and compares readyState with WebSocket's numbers.

/** WebSocket's readyState values, without needing WebSocket itself (unit tests run in Node). */
export const channelState = { connecting: 0, open: 1, closing: 2, closed: 3 } as const;

/** What the channel needs of the socket under it. */
export interface ChannelSocket {
  /** Sends a binary frame if the socket is open. */
  send(bytes: Uint8Array<ArrayBuffer>): void;
  /** noVNC gave up on the stream (it closes its channel after a protocol error). */
  close(): void;
}

export class ScreenChannel {
  // Own properties, as noVNC's check reads them (with the prototype's methods).
  binaryType: BinaryType = "arraybuffer";
  readonly protocol = "";
  readyState: number = channelState.open;
  onopen: ((event: Event) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  onclose: ((event: { code: number; reason: string; wasClean: boolean }) => void) | null = null;
  /**
   * Binary frames that came before noVNC attached (its RFB is made once the page has the channel):
   * they are handed over in order once it has, so the server's first bytes are never lost.
   */
  private held: ArrayBuffer[] = [];
  private reader: ((event: { data: ArrayBuffer }) => void) | null = null;
  private flushPlanned = false;

  constructor(
    private readonly socket: ChannelSocket,
    /** Each text frame, for the screen's JSON handler. */
    private readonly onText: (text: string) => void,
  ) {}

  get onmessage(): ((event: { data: ArrayBuffer }) => void) | null {
    return this.reader;
  }

  set onmessage(reader: ((event: { data: ArrayBuffer }) => void) | null) {
    this.reader = reader;
    // Not at once: noVNC sets onmessage before it has read the channel as open, and RFB bytes before
    // that would be taken for a broken handshake.
    if (reader && this.held.length > 0) this.planFlush();
  }

  /** A frame from the socket: text to the screen's handler, binary to noVNC. */
  deliver(data: string | ArrayBuffer): void {
    if (typeof data === "string") {
      this.onText(data);
      return;
    }
    if (this.readyState !== channelState.open) return;
    if (!this.reader || this.held.length > 0) {
      this.held.push(data);
      if (this.reader) this.planFlush();
      return;
    }
    this.reader({ data });
  }

  /** noVNC's own frames (RFB client messages). */
  send(data: ArrayBuffer | ArrayBufferView): void {
    if (this.readyState !== channelState.open) return;
    const bytes =
      data instanceof ArrayBuffer
        ? new Uint8Array(data)
        : new Uint8Array(data.buffer as ArrayBuffer, data.byteOffset, data.byteLength);
    this.socket.send(bytes);
  }

  /** noVNC closes its channel: it disconnected, or could not read the stream. */
  close(): void {
    if (this.readyState !== channelState.open) return;
    this.readyState = channelState.closing;
    this.socket.close();
  }

  /** The socket under the channel closed: noVNC is told, and nothing more reaches it. */
  closed(code: number, reason = ""): void {
    if (this.readyState === channelState.closed) return;
    this.readyState = channelState.closed;
    this.held = [];
    this.onclose?.({ code, reason, wasClean: code === 1000 });
  }

  private planFlush(): void {
    if (this.flushPlanned) return;
    this.flushPlanned = true;
    queueMicrotask(() => {
      this.flushPlanned = false;
      const held = this.held;
      this.held = [];
      for (const data of held) {
        if (this.readyState !== channelState.open || !this.reader) return;
        this.reader({ data });
      }
    });
  }
}
