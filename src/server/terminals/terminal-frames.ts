// The frames of an agent terminal (docs/agent.md, "Terminals"): after the upgrade, both ways, the lab
// agent's signed frames (agent/signed-frames.ts) laid out as mac (32 bytes) | type (1) | length (4,
// big-endian) | payload, the MAC over the type and the payload. Each direction is a stream of its
// own, so a frame cannot be dropped, reordered, replayed into another terminal or reflected back:
// whatever is not the key holder's ends the line.
import { FrameMacs, frameLabels, frameMacBytes, signedFrameBytes } from "../agent/signed-frames.ts";

export const terminalFrameTypes = {
  data: 0x01,
  resize: 0x02,
  exit: 0x03,
  ping: 0x04,
  pong: 0x05,
} as const;

/** The largest payload either side sends (the agent reads its PTY in pieces this size). */
export const terminalFrameBytes = signedFrameBytes;

const headBytes = frameMacBytes + 1 + 4;

export type TerminalDirection = "in" | "out";

export interface TerminalFrame {
  type: number;
  payload: Buffer;
}

export class BadTerminalFrameError extends Error {}

/** Signs the frames one direction sends, numbering them as it goes. */
export class TerminalFrameSigner {
  private readonly macs: FrameMacs;

  constructor(key: string, nonce: string, direction: TerminalDirection) {
    this.macs = new FrameMacs(key, frameLabels.terminal(direction), nonce);
  }

  frame(type: number, payload: Uint8Array = Buffer.alloc(0)): Buffer {
    const typeByte = Buffer.of(type);
    const mac = this.macs.sign(typeByte, payload);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(payload.length);
    return Buffer.concat([mac, typeByte, length, payload]);
  }
}

/** Cuts one direction's byte stream into verified frames; throws BadTerminalFrameError on the first bad one. */
export class TerminalFrameReader {
  private readonly macs: FrameMacs;
  // Pieces of the frame under way, joined only once it is whole: a frame dribbled in a byte at a
  // time must not cost a copy of everything before it per byte.
  private pieces: Buffer[] = [];
  private pendingBytes = 0;

  constructor(key: string, nonce: string, direction: TerminalDirection) {
    this.macs = new FrameMacs(key, frameLabels.terminal(direction), nonce);
  }

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
    const length = this.pieces[0]!.readUInt32BE(frameMacBytes + 1);
    if (length > terminalFrameBytes) throw new BadTerminalFrameError(`a frame of ${length} bytes`);
    return headBytes + length;
  }

  private verify(frame: Buffer): TerminalFrame {
    const type = frame[frameMacBytes] as number;
    const payload = frame.subarray(headBytes);
    const index = this.macs.next;
    if (!this.macs.verify(frame.subarray(0, frameMacBytes), Buffer.of(type), payload)) {
      throw new BadTerminalFrameError(`frame ${index} is not signed with this VM's key`);
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
