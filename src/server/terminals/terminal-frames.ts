// The frames of an agent terminal (docs/agent.md, "Terminals"): after the upgrade, both ways,
// mac (32 bytes) | type (1) | length (4, big-endian) | payload. Each frame's MAC covers its direction,
// the request's nonce and its place in that direction, so a frame cannot be dropped, reordered,
// replayed into another terminal or reflected back: whatever is not the key holder's ends the line.
import { createHmac, timingSafeEqual } from "node:crypto";

export const terminalFrameTypes = {
  data: 0x01,
  resize: 0x02,
  exit: 0x03,
  ping: 0x04,
  pong: 0x05,
} as const;

/** The largest payload either side sends (the agent reads its PTY in pieces this size). */
export const terminalFrameBytes = 64 * 1024;

const macBytes = 32;
const headBytes = macBytes + 1 + 4;

export type TerminalDirection = "in" | "out";

export interface TerminalFrame {
  type: number;
  payload: Buffer;
}

export class BadTerminalFrameError extends Error {}

function frameMac(
  key: string,
  direction: TerminalDirection,
  nonce: string,
  index: number,
): ReturnType<typeof createHmac> {
  return createHmac("sha256", key).update(`lab-agent-terminal:v1\n${direction}\n${nonce}\n${index}\n`);
}

/** Signs the frames one direction sends, numbering them as it goes. */
export class TerminalFrameSigner {
  private index = 0;

  constructor(
    private readonly key: string,
    private readonly nonce: string,
    private readonly direction: TerminalDirection,
  ) {}

  frame(type: number, payload: Uint8Array = Buffer.alloc(0)): Buffer {
    const typeByte = Buffer.of(type);
    const mac = frameMac(this.key, this.direction, this.nonce, this.index++)
      .update(typeByte)
      .update(payload)
      .digest();
    const length = Buffer.alloc(4);
    length.writeUInt32BE(payload.length);
    return Buffer.concat([mac, typeByte, length, payload]);
  }
}

/** Cuts one direction's byte stream into verified frames; throws BadTerminalFrameError on the first bad one. */
export class TerminalFrameReader {
  private index = 0;
  // Pieces of the frame under way, joined only once it is whole: a frame dribbled in a byte at a
  // time must not cost a copy of everything before it per byte.
  private pieces: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly key: string,
    private readonly nonce: string,
    private readonly direction: TerminalDirection,
  ) {}

  push(chunk: Buffer): TerminalFrame[] {
    this.pieces.push(chunk);
    this.pendingBytes += chunk.length;
    const frames: TerminalFrame[] = [];
    for (;;) {
      const needed = this.frameBytes();
      if (needed === undefined || this.pendingBytes < needed) return frames;
      const pending = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces);
      frames.push(this.verify(pending.subarray(0, needed)));
      const rest = pending.subarray(needed);
      this.pieces = rest.length > 0 ? [rest] : [];
      this.pendingBytes = rest.length;
    }
  }

  /** How long the frame under way is, once its head is in. */
  private frameBytes(): number | undefined {
    if (this.pendingBytes < headBytes) return undefined;
    if (this.pieces[0]!.length < headBytes) this.pieces = [Buffer.concat(this.pieces)];
    const length = this.pieces[0]!.readUInt32BE(macBytes + 1);
    if (length > terminalFrameBytes) throw new BadTerminalFrameError(`a frame of ${length} bytes`);
    return headBytes + length;
  }

  private verify(frame: Buffer): TerminalFrame {
    const type = frame[macBytes] as number;
    const payload = frame.subarray(headBytes);
    const expected = frameMac(this.key, this.direction, this.nonce, this.index++)
      .update(Buffer.of(type))
      .update(payload)
      .digest();
    if (!timingSafeEqual(expected, frame.subarray(0, macBytes))) {
      throw new BadTerminalFrameError(`frame ${this.index - 1} is not signed with this VM's key`);
    }
    return { type, payload };
  }
}

export function resizePayload(size: { cols: number; rows: number }): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt16BE(size.rows, 0);
  payload.writeUInt16BE(size.cols, 2);
  return payload;
}
