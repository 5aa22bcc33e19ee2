// A sandboxed guest's VNC server: RFB 3.8 on a unix socket in the guest's folder, as QEMU serves its
// guests' screens (security type None, 720x400, `QEMU (NAME)`; docs/vnc.md), drawing the text console
// (text-screen.ts) of the guest's tty1 (tty1.ts). Raw rectangles in the pixel format the client sets
// (32 bits a pixel, any shifts and byte order); an incremental request waits until something
// changed. Key events (X11 keysyms, down and up) go to tty1's keyboard; the pointer and the
// clipboard are read and ignored.
import { rm } from "node:fs/promises";
import net from "node:net";
import { screenHeight, screenWidth, type Rect, type TextScreen } from "./text-screen.ts";
import { encodePng } from "../../../common/png.ts";
import { loadVgaFont } from "./vga-font.ts";
import type { Tty1 } from "./tty1.ts";

interface PixelFormat {
  bigEndian: boolean;
  redShift: number;
  greenShift: number;
  blueShift: number;
}

// Little-endian 0x00RRGGBB, what QEMU announces.
const serverFormat: PixelFormat = { bigEndian: false, redShift: 16, greenShift: 8, blueShift: 0 };

export class ScreenServer {
  private readonly screen: TextScreen;
  private readonly stopWatching: () => void;
  private readonly server = net.createServer((socket) => this.serve(socket));
  private readonly viewers = new Set<Viewer>();

  private constructor(
    glyphs: Uint8Array,
    private readonly tty: Tty1,
    private readonly name: string,
    readonly socketPath: string,
  ) {
    this.screen = tty.screenWith(glyphs);
    this.stopWatching = tty.onChange(() => this.flush());
  }

  static async listen(options: { glyphs: Uint8Array; tty: Tty1; name: string; socketPath: string }) {
    const server = new ScreenServer(options.glyphs, options.tty, options.name, options.socketPath);
    await rm(options.socketPath, { force: true });
    await new Promise<void>((resolve, reject) => {
      server.server.once("error", reject);
      server.server.listen(options.socketPath, () => resolve());
    });
    return server;
  }

  /** The screen as a PNG, as libvirt's screenshot gives it. */
  png(): Buffer {
    return encodePng({ width: screenWidth, height: screenHeight, pixels: this.screen.pixels });
  }

  /** A connection to it, as QEMU's socket is dialled. */
  connect(): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.createConnection(this.socketPath, () => resolve(socket));
      socket.once("error", reject);
    });
  }

  async close(): Promise<void> {
    this.stopWatching();
    for (const viewer of this.viewers) viewer.socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Sends what changed to every viewer waiting for it. */
  private flush(): void {
    const dirty = this.screen.takeDirty();
    if (!dirty) return;
    for (const viewer of this.viewers) viewer.changed(dirty);
  }

  private serve(socket: net.Socket): void {
    const viewer = new Viewer(socket, this.screen, this.name, (keysym, down) => this.tty.key(keysym, down));
    this.viewers.add(viewer);
    socket.on("close", () => this.viewers.delete(viewer));
    socket.on("error", () => socket.destroy());
  }
}

class Viewer {
  private phase: "version" | "security" | "init" | "normal" = "version";
  private input = Buffer.alloc(0);
  private format = serverFormat;
  /** What changed since the last update this viewer got. */
  private pending: Rect | undefined;
  private waiting = false;

  constructor(
    readonly socket: net.Socket,
    private readonly screen: TextScreen,
    private readonly name: string,
    private readonly key: (keysym: number, down: boolean) => void,
  ) {
    socket.write("RFB 003.008\n");
    socket.on("data", (chunk: Buffer) => {
      this.input = Buffer.concat([this.input, chunk]);
      while (this.step()) {
        // One message a step, while whole ones are there.
      }
    });
  }

  changed(rect: Rect): void {
    this.pending = this.pending ? union(this.pending, rect) : rect;
    if (this.waiting) this.sendPending();
  }

  private take(length: number): Buffer | undefined {
    if (this.input.length < length) return undefined;
    const taken = this.input.subarray(0, length);
    this.input = this.input.subarray(length);
    return taken;
  }

  private step(): boolean {
    if (this.phase === "version") {
      if (!this.take(12)) return false;
      this.socket.write(Buffer.from([1, 1])); // one security type: None
      this.phase = "security";
      return true;
    }
    if (this.phase === "security") {
      if (!this.take(1)) return false;
      this.socket.write(Buffer.alloc(4)); // SecurityResult: OK
      this.phase = "init";
      return true;
    }
    if (this.phase === "init") {
      if (!this.take(1)) return false; // ClientInit: every client shares
      const name = Buffer.from(`QEMU (${this.name})`);
      const init = Buffer.alloc(24);
      init.writeUInt16BE(screenWidth, 0);
      init.writeUInt16BE(screenHeight, 2);
      Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]).copy(init, 4);
      init.writeUInt32BE(name.length, 20);
      this.socket.write(Buffer.concat([init, name]));
      this.phase = "normal";
      return true;
    }
    return this.message();
  }

  private message(): boolean {
    const type = this.input[0];
    if (type === undefined) return false;
    const lengths: Record<number, number> = { 0: 20, 3: 10, 4: 8, 5: 6 };
    if (type === 2 || type === 6) {
      if (this.input.length < (type === 2 ? 4 : 8)) return false;
      const length = type === 2 ? 4 + 4 * this.input.readUInt16BE(2) : 8 + this.input.readUInt32BE(4);
      return this.take(length) !== undefined; // SetEncodings (Raw is always sent), ClientCutText
    }
    const length = lengths[type];
    if (length === undefined) {
      this.socket.destroy();
      return false;
    }
    const message = this.take(length);
    if (!message) return false;
    if (type === 0) this.setPixelFormat(message);
    else if (type === 3) this.updateRequest(message.readUInt8(1) === 1);
    else if (type === 4) this.key(message.readUInt32BE(4), message.readUInt8(1) === 1);
    return true;
  }

  private setPixelFormat(message: Buffer): void {
    if (message.readUInt8(4) !== 32 || message.readUInt8(7) !== 1) {
      // Only 32-bit true colour is drawn here, as every VNC client asks for by default.
      this.socket.destroy();
      return;
    }
    this.format = {
      bigEndian: message.readUInt8(6) !== 0,
      redShift: message.readUInt8(14),
      greenShift: message.readUInt8(15),
      blueShift: message.readUInt8(16),
    };
  }

  private updateRequest(incremental: boolean): void {
    if (!incremental) this.pending = { x: 0, y: 0, width: screenWidth, height: screenHeight };
    this.waiting = true;
    if (this.pending) this.sendPending();
  }

  private sendPending(): void {
    const rect = this.pending;
    if (!rect) return;
    this.pending = undefined;
    this.waiting = false;
    const header = Buffer.alloc(16);
    header.writeUInt8(0, 0);
    header.writeUInt16BE(1, 2);
    header.writeUInt16BE(rect.x, 4);
    header.writeUInt16BE(rect.y, 6);
    header.writeUInt16BE(rect.width, 8);
    header.writeUInt16BE(rect.height, 10);
    header.writeInt32BE(0, 12); // Raw
    this.socket.write(Buffer.concat([header, this.rawPixels(rect)]));
  }

  private rawPixels(rect: Rect): Buffer {
    const out = Buffer.alloc(rect.width * rect.height * 4);
    const { pixels } = this.screen;
    const { bigEndian, redShift, greenShift, blueShift } = this.format;
    let offset = 0;
    for (let y = rect.y; y < rect.y + rect.height; y += 1) {
      for (let x = rect.x; x < rect.x + rect.width; x += 1) {
        const at = (y * screenWidth + x) * 4;
        const value =
          ((pixels[at] ?? 0) << redShift) |
          ((pixels[at + 1] ?? 0) << greenShift) |
          ((pixels[at + 2] ?? 0) << blueShift);
        if (bigEndian) out.writeUInt32BE(value >>> 0, offset);
        else out.writeUInt32LE(value >>> 0, offset);
        offset += 4;
      }
    }
    return out;
  }
}

function union(a: Rect, b: Rect): Rect {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return {
    x,
    y,
    width: Math.max(a.x + a.width, b.x + b.width) - x,
    height: Math.max(a.y + a.height, b.y + b.height) - y,
  };
}

let font: ReturnType<typeof loadVgaFont> | undefined;

/**
 * A guest's screen server at `socketPath`, drawn with the VGA BIOS's font; rejects naming what is
 * missing when the font is not there.
 */
export async function startScreenServer(options: {
  tty: Tty1;
  name: string;
  socketPath: string;
}): Promise<ScreenServer> {
  font ??= loadVgaFont();
  if ("problem" in font) throw new Error(font.problem);
  return ScreenServer.listen({ ...options, glyphs: font.glyphs });
}
