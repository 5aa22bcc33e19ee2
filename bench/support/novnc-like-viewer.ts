// A viewer of the BFF's screen websocket that asks for what noVNC asks for (its SetEncodings list:
// Tight, TightPNG and the rest, in noVNC's order) and so gets what a browser gets from the hub:
// TightPNG rectangles, fills for one-colour ones, Raw below PNG's break-even size. It decodes them
// into a framebuffer of the same layout as the hub's own RfbClient keeps (red, green, blue, unused),
// asks for the next update as soon as one is applied (as noVNC does), and counts what arrives.
// RfbClient (src/server/screen/rfb-client.ts) speaks only what the hub asks QEMU for (Zlib, Raw,
// CopyRect), not TightPNG, so a browser's bytes need this second, smaller client.
import { inflateSync } from "node:zlib";
import type WebSocket from "ws";
import type { Framebuffer, Rect } from "../../src/server/screen/rfb-client.ts";
import { framebufferPixelFormat } from "../../src/server/screen/rfb-client.ts";
import { pngPixels } from "../../src/emulator/testing/png-pixels.ts";

/** noVNC 1.x's SetEncodings at 24-bit depth (core/rfb.js, _sendEncodings), quality 6, compression 2. */
const novncEncodings = [
  1,
  7,
  -260,
  16,
  21,
  5,
  2,
  0,
  -32 + 6,
  -256 + 2,
  -223,
  -224,
  -258,
  -308,
  -309,
  -312,
  -313,
  -307,
  0xc0a1e5ce,
  0x574d5664,
  -239,
];

const tightPng = -260;
const raw = 0;
const desktopSize = -223;
const extendedDesktopSize = -308;

type Phase = "version" | "security" | "securityResult" | "serverInit" | "normal" | "failed";

export class NovncLikeViewer {
  framebuffer: Framebuffer = { width: 0, height: 0, pixels: new Uint8Array(0) };
  /** Binary bytes received (RFB), and updates applied. */
  bytes = 0;
  updates = 0;
  failure: string | undefined;
  private phase: Phase = "version";
  private input: Buffer = Buffer.alloc(0);
  private readonly listeners = new Set<(rects: Rect[]) => void>();

  constructor(readonly socket: WebSocket) {
    socket.on("message", (data, isBinary) => {
      if (!isBinary) return;
      const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
      this.bytes += bytes.length;
      this.receive(bytes);
    });
  }

  /** Called after each applied update, with its rectangles. */
  onUpdate(listener: (rects: Rect[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  key(keysym: number, down: boolean): void {
    const message = Buffer.alloc(8);
    message.writeUInt8(4, 0);
    message.writeUInt8(down ? 1 : 0, 1);
    message.writeUInt32BE(keysym >>> 0, 4);
    this.send(message);
  }

  close(): void {
    this.socket.close();
  }

  private send(bytes: Buffer): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(bytes, { binary: true });
  }

  private requestUpdate(incremental: boolean): void {
    const message = Buffer.alloc(10);
    message.writeUInt8(3, 0);
    message.writeUInt8(incremental ? 1 : 0, 1);
    message.writeUInt16BE(this.framebuffer.width, 6);
    message.writeUInt16BE(this.framebuffer.height, 8);
    this.send(message);
  }

  private receive(bytes: Buffer): void {
    this.input = this.input.length === 0 ? bytes : Buffer.concat([this.input, bytes]);
    while (this.phase !== "failed" && this.step()) {
      // One message a step while whole ones are there.
    }
  }

  private fail(reason: string): false {
    this.phase = "failed";
    this.failure = reason;
    return false;
  }

  private take(length: number): Buffer | undefined {
    if (this.input.length < length) return undefined;
    const taken = this.input.subarray(0, length);
    this.input = this.input.subarray(length);
    return taken;
  }

  private step(): boolean {
    switch (this.phase) {
      case "version":
        if (!this.take(12)) return false;
        this.send(Buffer.from("RFB 003.008\n", "latin1"));
        this.phase = "security";
        return true;
      case "security": {
        const count = this.input[0];
        if (count === undefined || this.input.length < 1 + count) return false;
        const types = this.take(1 + count)!.subarray(1);
        if (!types.includes(1)) return this.fail("no security type None");
        this.send(Buffer.from([1]));
        this.phase = "securityResult";
        return true;
      }
      case "securityResult": {
        const result = this.take(4);
        if (!result) return false;
        if (result.readUInt32BE(0) !== 0) return this.fail("refused");
        this.send(Buffer.from([1])); // shared
        this.phase = "serverInit";
        return true;
      }
      case "serverInit": {
        if (this.input.length < 24) return false;
        const init = this.take(24 + this.input.readUInt32BE(20));
        if (!init) return false;
        this.resize(init.readUInt16BE(0), init.readUInt16BE(2));
        this.send(Buffer.concat([Buffer.from([0, 0, 0, 0]), framebufferPixelFormat]));
        const setEncodings = Buffer.alloc(4 + 4 * novncEncodings.length);
        setEncodings.writeUInt8(2, 0);
        setEncodings.writeUInt16BE(novncEncodings.length, 2);
        novncEncodings.forEach((encoding, index) =>
          setEncodings.writeUInt32BE(encoding >>> 0, 4 + 4 * index),
        );
        this.send(setEncodings);
        this.phase = "normal";
        this.requestUpdate(false);
        return true;
      }
      case "normal":
        return this.message();
      default:
        return false;
    }
  }

  private message(): boolean {
    const type = this.input[0];
    if (type === undefined) return false;
    if (type === 0) return this.update();
    if (type === 2) return this.take(1) !== undefined;
    if (type === 3) {
      if (this.input.length < 8) return false;
      return this.take(8 + this.input.readUInt32BE(4)) !== undefined;
    }
    return this.fail(`message type ${type}`);
  }

  /** A whole FramebufferUpdate, parsed before any of it is applied (as RfbClient does). */
  private update(): boolean {
    if (this.input.length < 4) return false;
    const count = this.input.readUInt16BE(2);
    const rects: { rect: Rect; encoding: number; at: number; length: number }[] = [];
    let offset = 4;
    for (let index = 0; index < count; index += 1) {
      if (this.input.length < offset + 12) return false;
      const rect = {
        x: this.input.readUInt16BE(offset),
        y: this.input.readUInt16BE(offset + 2),
        width: this.input.readUInt16BE(offset + 4),
        height: this.input.readUInt16BE(offset + 6),
      };
      const encoding = this.input.readInt32BE(offset + 8);
      const at = offset + 12;
      const length = this.rectLength(rect, encoding, at);
      if (length === undefined) return this.fail(`encoding ${encoding}`);
      if (length === null || this.input.length < at + length) return false;
      rects.push({ rect, encoding, at, length });
      offset = at + length;
    }
    const message = this.take(offset)!;
    for (const { rect, encoding, at, length } of rects) {
      const body = message.subarray(at, at + length);
      if (encoding === raw) this.paint(rect, body, 4);
      else if (encoding === tightPng) this.tightPng(rect, body);
      else this.resize(rect.width, rect.height);
    }
    this.updates += 1;
    this.requestUpdate(true);
    for (const listener of this.listeners) listener(rects.map(({ rect }) => rect));
    return true;
  }

  /** The rectangle's length after its header; null: not all here yet; undefined: unknown encoding. */
  private rectLength(rect: Rect, encoding: number, at: number): number | null | undefined {
    const have = this.input.length - at;
    switch (encoding) {
      case raw:
        return rect.width * rect.height * 4;
      case desktopSize:
        return 0;
      case extendedDesktopSize:
        return have < 1 ? null : 4 + 16 * this.input[at]!;
      case tightPng: {
        if (have < 1) return null;
        const control = this.input[at]! >> 4;
        if (control === 0x8) return 4;
        if (control !== 0xa) return undefined;
        // Tight's compact length: 7 bits a byte, low first, one to three bytes.
        let length = 0;
        for (let index = 0; index < 3; index += 1) {
          if (have < 2 + index) return null;
          const byte = this.input[at + 1 + index]!;
          length += (index === 2 ? byte : byte & 0x7f) << (7 * index);
          if ((byte & 0x80) === 0 || index === 2) return 1 + index + 1 + length;
        }
        return undefined;
      }
      default:
        return undefined;
    }
  }

  private tightPng(rect: Rect, body: Buffer): void {
    if (body[0]! >> 4 === 0x8) {
      const colour = body.subarray(1, 4);
      const { pixels, width: stride } = this.framebuffer;
      for (let y = rect.y; y < rect.y + rect.height; y += 1) {
        for (let x = rect.x; x < rect.x + rect.width; x += 1) pixels.set(colour, (y * stride + x) * 4);
      }
      return;
    }
    let lengthBytes = 1;
    while (lengthBytes < 3 && (body[lengthBytes]! & 0x80) !== 0) lengthBytes += 1;
    const png = body.subarray(1 + lengthBytes);
    this.paint(rect, decodePng(png), 3);
  }

  /** Rows of 3 (RGB) or 4 (RGBX) bytes a pixel into the framebuffer. */
  private paint(rect: Rect, data: Uint8Array, bytesPerPixel: 3 | 4): void {
    const { pixels, width: stride } = this.framebuffer;
    for (let y = 0; y < rect.height; y += 1) {
      let from = y * rect.width * bytesPerPixel;
      let to = ((rect.y + y) * stride + rect.x) * 4;
      if (bytesPerPixel === 4) {
        pixels.set(data.subarray(from, from + rect.width * 4), to);
        continue;
      }
      for (let x = 0; x < rect.width; x += 1, from += 3, to += 4) {
        pixels[to] = data[from]!;
        pixels[to + 1] = data[from + 1]!;
        pixels[to + 2] = data[from + 2]!;
      }
    }
  }

  private resize(width: number, height: number): void {
    if (this.framebuffer.width === width && this.framebuffer.height === height) return;
    this.framebuffer = { width, height, pixels: new Uint8Array(width * height * 4) };
  }
}

/**
 * The RGB rows of the hub's PNGs (8-bit RGB, every row unfiltered: common/png.ts), as a browser's
 * native decoder would give them; any other PNG through the general decoder.
 */
function decodePng(png: Buffer): Uint8Array {
  let width = 0;
  let height = 0;
  const data: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString("latin1", at + 4, at + 8);
    if (type === "IHDR") {
      width = png.readUInt32BE(at + 8);
      height = png.readUInt32BE(at + 12);
    } else if (type === "IDAT") data.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const rows = inflateSync(Buffer.concat(data));
  const stride = width * 3;
  const rgb = new Uint8Array(height * stride);
  for (let y = 0; y < height; y += 1) {
    if (rows[y * (stride + 1)] !== 0) return pngPixels(png).rgb;
    rgb.set(rows.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)), y * stride);
  }
  return rgb;
}
