// An RFB 3.8 client (RFC 6143) that keeps a VM's screen as a framebuffer: what the screen hub holds
// of QEMU's VNC server, one per VM, whoever watches. QEMU offers security type None only and speaks
// 32-bit true colour (docs/vnc.md); the client asks for the pixel format its framebuffer keeps
// (bytes red, green, blue, unused: what browsers' canvases and noVNC use, so rows copy as they are),
// and for Zlib (Raw through one zlib stream: a text screen shrinks twentyfold on the way), Raw and
// CopyRect, plus DesktopSize and ExtendedDesktopSize (QEMU's screen grows from 640x480 to VGA text
// mode's 720x400 while it boots) and QEMU's extended key events, which QEMU acknowledges with a
// pseudo-rectangle. Bytes go in through receive() and out through the `send` it is given, so it
// runs over KubeVirt's websocket as over a plain socket.
import { ZlibInflater } from "./zlib-inflater.ts";

const encodings = {
  zlib: 6,
  raw: 0,
  copyRect: 1,
  desktopSize: -223,
  extendedDesktopSize: -308,
  qemuExtendedKeyEvent: -258,
} as const;

/** The longest clipboard text read past; longer ones end the connection rather than fill the BFF's memory. */
const maxCutTextBytes = 1024 * 1024;

/** The pixel format asked for: 32 bpp, depth 24, little-endian, red at bit 0, green 8, blue 16. */
export const framebufferPixelFormat = Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 0, 8, 16, 0, 0, 0]);

export interface Framebuffer {
  width: number;
  height: number;
  /** Four bytes a pixel, row after row: red, green, blue and one the server may leave at anything. */
  pixels: Uint8Array;
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface RfbEvents {
  /** ServerInit: the screen's size and the server's name. */
  ready?(init: { width: number; height: number; name: string }): void;
  /** A framebuffer update was applied, with the rectangles it changed. */
  updated?(rects: Rect[]): void;
  /** The server broke the protocol or refused: the connection is of no further use. */
  failed?(reason: string): void;
}

type Phase = "version" | "security" | "securityResult" | "serverInit" | "normal" | "failed";

export class RfbClient {
  framebuffer: Framebuffer;
  name = "";
  private phase: Phase = "version";
  private input: Buffer = Buffer.alloc(0);
  /**
   * Pieces received since the input last fell short, and how long the input must be for the message
   * it waits for: a full screen of Raw comes in many pieces, and joining each onto the input as it
   * came would copy the message over and over.
   */
  private pieces: Buffer[] = [];
  private piecesBytes = 0;
  private wanted = 0;
  private readonly inflater = new ZlibInflater();

  /**
   * `framebuffer`: what the screen showed when a previous connection dropped; kept (not cleared)
   * until the server's first update paints over it, when the server's screen has the same size.
   */
  constructor(
    private readonly send: (bytes: Buffer) => void,
    private readonly events: RfbEvents = {},
    framebuffer: Framebuffer = { width: 0, height: 0, pixels: new Uint8Array(0) },
  ) {
    this.framebuffer = framebuffer;
  }

  /** Bytes from the server, in any pieces. */
  receive(bytes: Buffer): void {
    this.pieces.push(bytes);
    this.piecesBytes += bytes.length;
    if (this.input.length + this.piecesBytes < this.wanted) return;
    this.input =
      this.input.length === 0 && this.pieces.length === 1
        ? bytes
        : Buffer.concat([this.input, ...this.pieces]);
    this.pieces = [];
    this.piecesBytes = 0;
    this.wanted = 0;
    while (this.phase !== "failed" && this.step()) {
      // Each step consumed a whole message; go on while whole ones are there.
    }
  }

  /** The message waits for the input to be `length` bytes long. */
  private waitFor(length: number): false {
    this.wanted = length;
    return false;
  }

  /** Asks for the changes since the last update (or everything, not incremental). */
  requestUpdate(incremental = true): void {
    const { width, height } = this.framebuffer;
    const message = Buffer.alloc(10);
    message.writeUInt8(3, 0);
    message.writeUInt8(incremental ? 1 : 0, 1);
    message.writeUInt16BE(width, 6);
    message.writeUInt16BE(height, 8);
    this.send(message);
  }

  /** An X11 keysym pressed or released. */
  key(keysym: number, down: boolean): void {
    const message = Buffer.alloc(8);
    message.writeUInt8(4, 0);
    message.writeUInt8(down ? 1 : 0, 1);
    message.writeUInt32BE(keysym >>> 0, 4);
    this.send(message);
  }

  pointer(x: number, y: number, buttons: number): void {
    const message = Buffer.alloc(6);
    message.writeUInt8(5, 0);
    message.writeUInt8(buttons, 1);
    message.writeUInt16BE(x, 2);
    message.writeUInt16BE(y, 4);
    this.send(message);
  }

  /** One message or handshake step, if all of it has arrived; false to wait for more bytes. */
  private step(): boolean {
    switch (this.phase) {
      case "version":
        return this.version();
      case "security":
        return this.security();
      case "securityResult":
        return this.securityResult();
      case "serverInit":
        return this.serverInit();
      case "normal":
        return this.serverMessage();
      default:
        return false;
    }
  }

  private take(length: number): Buffer | undefined {
    if (this.input.length < length) return undefined;
    const taken = this.input.subarray(0, length);
    this.input = this.input.subarray(length);
    return taken;
  }

  private fail(reason: string): false {
    this.phase = "failed";
    this.events.failed?.(reason);
    return false;
  }

  private version(): boolean {
    const line = this.take(12);
    if (!line) return false;
    const text = line.toString("latin1");
    if (!/^RFB 003\.(00[89]|[0-9]{3})\n$/.test(text) || text < "RFB 003.008\n") {
      return this.fail(`the server speaks ${JSON.stringify(text.trim())}, not RFB 3.8`);
    }
    this.send(Buffer.from("RFB 003.008\n", "latin1"));
    this.phase = "security";
    return true;
  }

  private security(): boolean {
    const count = this.input[0];
    if (count === undefined) return false;
    if (count === 0) return this.failure(1, "the server refused the connection");
    const types = this.take(1 + count)?.subarray(1);
    if (!types) return false;
    if (!types.includes(1))
      return this.fail(`the server offers no security type None (only ${[...types].join(", ")})`);
    this.send(Buffer.from([1]));
    this.phase = "securityResult";
    return true;
  }

  private securityResult(): boolean {
    const result = this.input.length >= 4 ? this.input.readUInt32BE(0) : undefined;
    if (result === undefined) return false;
    if (result !== 0) return this.failure(4, "the server refused the connection");
    this.take(4);
    // ClientInit: shared. An exclusive client would cut every other viewer at QEMU's default policy.
    this.send(Buffer.from([1]));
    this.phase = "serverInit";
    return true;
  }

  /** A refusal with its reason string after `offset` bytes (RFB 3.8's failure messages). */
  private failure(offset: number, what: string): boolean {
    if (this.input.length < offset + 4) return false;
    const length = this.input.readUInt32BE(offset);
    const reason = this.take(offset + 4 + length)?.subarray(offset + 4);
    if (!reason) return false;
    return this.fail(`${what}: ${reason.toString("utf8")}`);
  }

  private serverInit(): boolean {
    if (this.input.length < 24) return false;
    const nameLength = this.input.readUInt32BE(20);
    const init = this.take(24 + nameLength);
    if (!init) return false;
    this.resize(init.readUInt16BE(0), init.readUInt16BE(2));
    this.name = init.subarray(24).toString("utf8");
    this.send(Buffer.concat([Buffer.from([0, 0, 0, 0]), framebufferPixelFormat]));
    const list = Object.values(encodings);
    const setEncodings = Buffer.alloc(4 + 4 * list.length);
    setEncodings.writeUInt8(2, 0);
    setEncodings.writeUInt16BE(list.length, 2);
    list.forEach((encoding, index) => setEncodings.writeInt32BE(encoding, 4 + 4 * index));
    this.send(setEncodings);
    this.phase = "normal";
    this.events.ready?.({ width: this.framebuffer.width, height: this.framebuffer.height, name: this.name });
    this.requestUpdate(false);
    return true;
  }

  private serverMessage(): boolean {
    const type = this.input[0];
    if (type === undefined) return false;
    if (type === 0) return this.framebufferUpdate();
    if (type === 2) return this.take(1) !== undefined; // Bell.
    if (type === 3) {
      // ServerCutText: read past it (the guest's clipboard is not shown).
      if (this.input.length < 8) return false;
      const length = this.input.readUInt32BE(4);
      if (length > maxCutTextBytes) return this.fail("the server's clipboard text is too long");
      return this.take(8 + length) !== undefined || this.waitFor(8 + length);
    }
    return this.fail(`the server sent message type ${type}, which this client does not know`);
  }

  /**
   * A whole FramebufferUpdate is parsed before any of it is applied, so a message split across
   * receives is read again from its start once complete.
   */
  private framebufferUpdate(): boolean {
    if (this.input.length < 4) return false;
    const count = this.input.readUInt16BE(2);
    const rects: (Rect & { encoding: number; at: number })[] = [];
    let offset = 4;
    // The screen's size as the rectangles before each one leave it (a resize may come first).
    let size = { width: this.framebuffer.width, height: this.framebuffer.height };
    for (let index = 0; index < count; index += 1) {
      if (this.input.length < offset + 12) return this.waitFor(offset + 12);
      const rect = {
        x: this.input.readUInt16BE(offset),
        y: this.input.readUInt16BE(offset + 2),
        width: this.input.readUInt16BE(offset + 4),
        height: this.input.readUInt16BE(offset + 6),
        encoding: this.input.readInt32BE(offset + 8),
        at: offset + 12,
      };
      const length = this.rectLength(rect);
      if (length === undefined)
        return this.fail(`the server sent encoding ${rect.encoding}, which was not asked for`);
      if (rect.encoding === encodings.desktopSize || rect.encoding === encodings.extendedDesktopSize) {
        size = { width: rect.width, height: rect.height };
      } else if (drawsPixels(rect.encoding) && !inside(rect, size)) {
        return this.fail(`the server sent a rectangle outside its ${size.width}x${size.height} screen`);
      } else if (rect.encoding === encodings.copyRect && this.input.length >= rect.at + 4) {
        const from = {
          ...rect,
          x: this.input.readUInt16BE(rect.at),
          y: this.input.readUInt16BE(rect.at + 2),
        };
        if (!inside(from, size)) return this.fail("the server copied from outside its screen");
      }
      if (this.input.length < rect.at + length) {
        // A length not known yet (Zlib's comes first in its data) needs the bytes that say it.
        return this.waitFor(length === Number.MAX_SAFE_INTEGER ? rect.at + 4 : rect.at + length);
      }
      rects.push(rect);
      offset = rect.at + length;
    }
    const message = this.take(offset)!;
    const changed: Rect[] = [];
    for (const rect of rects) {
      if (rect.encoding === encodings.raw) this.applyRaw(rect, message.subarray(rect.at));
      else if (rect.encoding === encodings.zlib) {
        const compressed = message.subarray(rect.at + 4, rect.at + 4 + message.readUInt32BE(rect.at));
        const raw = this.inflater.inflate(compressed, rect.width * rect.height * 4);
        if (!raw) return this.fail("the server's zlib stream is corrupt");
        this.applyRaw(rect, raw);
      } else if (rect.encoding === encodings.copyRect) {
        this.applyCopy(rect, message.readUInt16BE(rect.at), message.readUInt16BE(rect.at + 2));
      } else if (rect.encoding === encodings.desktopSize || rect.encoding === encodings.extendedDesktopSize) {
        this.resize(rect.width, rect.height);
      } else continue; // QEMU's acknowledgement of extended key events: nothing to draw.
      changed.push({ x: rect.x, y: rect.y, width: rect.width, height: rect.height });
    }
    this.events.updated?.(changed);
    return true;
  }

  private rectLength(rect: Rect & { encoding: number; at: number }): number | undefined {
    switch (rect.encoding) {
      case encodings.raw:
        return rect.width * rect.height * 4;
      case encodings.zlib:
        return this.input.length < rect.at + 4
          ? Number.MAX_SAFE_INTEGER
          : 4 + this.input.readUInt32BE(rect.at);
      case encodings.copyRect:
        return 4;
      case encodings.desktopSize:
      case encodings.qemuExtendedKeyEvent:
        return 0;
      case encodings.extendedDesktopSize: {
        // number-of-screens (1 byte), 3 padding, then 16 bytes a screen.
        const screens = this.input[rect.at];
        return screens === undefined ? Number.MAX_SAFE_INTEGER : 4 + 16 * screens;
      }
      default:
        return undefined;
    }
  }

  private resize(width: number, height: number): void {
    const { framebuffer } = this;
    if (framebuffer.width === width && framebuffer.height === height) return;
    this.framebuffer = { width, height, pixels: new Uint8Array(width * height * 4) };
  }

  /** Rows of the framebuffer's own pixel format, as asked for: copied as they are (inside the screen, checked when read). */
  private applyRaw(rect: Rect, data: Uint8Array): void {
    const { pixels, width: stride } = this.framebuffer;
    const rowBytes = rect.width * 4;
    for (let row = 0; row < rect.height; row += 1) {
      pixels.set(data.subarray(row * rowBytes, (row + 1) * rowBytes), ((rect.y + row) * stride + rect.x) * 4);
    }
  }

  private applyCopy(rect: Rect, fromX: number, fromY: number): void {
    const { pixels, width: stride } = this.framebuffer;
    const rowBytes = rect.width * 4;
    // Rows copied in the order that never reads a row already overwritten.
    const order = fromY < rect.y ? [...Array(rect.height).keys()].reverse() : [...Array(rect.height).keys()];
    for (const row of order) {
      const source = ((fromY + row) * stride + fromX) * 4;
      pixels.copyWithin(((rect.y + row) * stride + rect.x) * 4, source, source + rowBytes);
    }
  }
}

function drawsPixels(encoding: number): boolean {
  return encoding === encodings.raw || encoding === encodings.zlib || encoding === encodings.copyRect;
}

function inside(rect: Rect, size: { width: number; height: number }): boolean {
  return rect.x + rect.width <= size.width && rect.y + rect.height <= size.height;
}
