// The server half of RFB 3.8 (RFC 6143) that each browser speaks with the BFF: the handshake without
// authentication (the BFF checked who it is before the upgrade), then the client's messages parsed
// into events. What the BFF sends after the handshake is built by screen-encoding.ts. Any client
// message this server never invited (QEMU's, fences, continuous updates) ends the connection.
import { framebufferPixelFormat } from "./rfb-client.ts";

/** How a viewer wants pixels: 32 bits each, 8 a channel, at these bit shifts. */
export interface PixelLayout {
  bigEndian: boolean;
  redShift: number;
  greenShift: number;
  blueShift: number;
}

/** noVNC's layout, and the framebuffer's: bytes red, green, blue, unused. */
export const rgbxLayout: PixelLayout = { bigEndian: false, redShift: 0, greenShift: 8, blueShift: 16 };

export type ViewerMessage =
  | { type: "pixel-format"; layout: PixelLayout }
  | { type: "encodings"; encodings: number[] }
  | { type: "update-request"; incremental: boolean }
  | { type: "key"; keysym: number; down: boolean }
  | { type: "pointer"; x: number; y: number; buttons: number };

export interface RfbServerEvents {
  /** ClientInit arrived: the ServerInit to send, built from the screen as it is now. */
  serverInit(): { width: number; height: number; name: string };
  message(message: ViewerMessage): void;
  /** The client broke the protocol: close it with this reason. */
  failed(reason: string): void;
}

type Phase = "version" | "security" | "clientInit" | "normal" | "failed";

/** The longest clipboard text a client may send (it is read past: pastes are typed, screen-protocol.ts). */
const maxCutTextBytes = 64 * 1024;

export class RfbServerSession {
  private phase: Phase = "version";
  private input: Buffer = Buffer.alloc(0);

  constructor(
    private readonly send: (bytes: Buffer) => void,
    private readonly events: RfbServerEvents,
  ) {
    send(Buffer.from("RFB 003.008\n", "latin1"));
  }

  receive(bytes: Buffer): void {
    this.input = this.input.length === 0 ? bytes : Buffer.concat([this.input, bytes]);
    while (this.phase !== "failed" && this.step()) {
      // Each step consumed a whole message; go on while whole ones are there.
    }
  }

  private step(): boolean {
    switch (this.phase) {
      case "version":
        return this.version();
      case "security":
        return this.security();
      case "clientInit":
        return this.clientInit();
      case "normal":
        return this.clientMessage();
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
    this.events.failed(reason);
    return false;
  }

  private version(): boolean {
    const line = this.take(12)?.toString("latin1");
    if (line === undefined) return false;
    if (line !== "RFB 003.008\n")
      return this.fail(`the client speaks ${JSON.stringify(line.trim())}, not RFB 3.8`);
    this.send(Buffer.from([1, 1])); // one security type: None
    this.phase = "security";
    return true;
  }

  private security(): boolean {
    const choice = this.take(1);
    if (!choice) return false;
    if (choice[0] !== 1) return this.fail(`the client chose security type ${choice[0]}, not None`);
    this.send(Buffer.from([0, 0, 0, 0])); // SecurityResult: OK
    this.phase = "clientInit";
    return true;
  }

  private clientInit(): boolean {
    // The shared flag is not read: every viewer shares the BFF's one connection to the VM.
    if (!this.take(1)) return false;
    const { width, height, name } = this.events.serverInit();
    const nameBytes = Buffer.from(name, "utf8");
    const init = Buffer.alloc(24);
    init.writeUInt16BE(width, 0);
    init.writeUInt16BE(height, 2);
    framebufferPixelFormat.copy(init, 4);
    init.writeUInt32BE(nameBytes.length, 20);
    this.send(Buffer.concat([init, nameBytes]));
    this.phase = "normal";
    return true;
  }

  private clientMessage(): boolean {
    const type = this.input[0];
    switch (type) {
      case undefined:
        return false;
      case 0:
        return this.setPixelFormat();
      case 2:
        return this.setEncodings();
      case 3: {
        const request = this.take(10);
        if (!request) return false;
        this.events.message({ type: "update-request", incremental: request[1] !== 0 });
        return true;
      }
      case 4: {
        const key = this.take(8);
        if (!key) return false;
        this.events.message({ type: "key", down: key[1] !== 0, keysym: key.readUInt32BE(4) });
        return true;
      }
      case 5: {
        const pointer = this.take(6);
        if (!pointer) return false;
        const [, buttons = 0] = pointer;
        this.events.message({
          type: "pointer",
          buttons,
          x: pointer.readUInt16BE(2),
          y: pointer.readUInt16BE(4),
        });
        return true;
      }
      case 6: {
        if (this.input.length < 8) return false;
        const length = this.input.readInt32BE(4);
        if (length < 0 || length > maxCutTextBytes)
          return this.fail("the client's clipboard text is too long");
        return this.take(8 + length) !== undefined;
      }
      default:
        return this.fail(`the client sent message type ${type}, which this server does not take`);
    }
  }

  private setPixelFormat(): boolean {
    const message = this.take(20);
    if (!message) return false;
    const [bitsPerPixel, depth, bigEndian, trueColour] = message.subarray(4, 8);
    const maxima = [message.readUInt16BE(8), message.readUInt16BE(10), message.readUInt16BE(12)];
    const shifts = [message[14], message[15], message[16]] as number[];
    const byteAligned = shifts.every((shift) => shift % 8 === 0 && shift <= 24);
    if (
      bitsPerPixel !== 32 ||
      depth !== 24 ||
      trueColour !== 1 ||
      maxima.some((max) => max !== 255) ||
      !byteAligned
    ) {
      return this.fail("the client asked for a pixel format other than 32-bit true colour (noVNC's)");
    }
    const [redShift, greenShift, blueShift] = shifts as [number, number, number];
    this.events.message({
      type: "pixel-format",
      layout: { bigEndian: bigEndian !== 0, redShift, greenShift, blueShift },
    });
    return true;
  }

  private setEncodings(): boolean {
    if (this.input.length < 4) return false;
    const count = this.input.readUInt16BE(2);
    const message = this.take(4 + 4 * count);
    if (!message) return false;
    const encodings = Array.from({ length: count }, (_, index) => message.readInt32BE(4 + 4 * index));
    this.events.message({ type: "encodings", encodings });
    return true;
  }
}
