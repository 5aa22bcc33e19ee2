// How a file's bytes cross the wire to and from the agent (docs/agent.md, "Files"). A streamed
// request signs the file's size (agent/signature.ts), and the bytes follow as the lab agent's signed
// frames (agent/signed-frames.ts), each a MAC then up to 64 KiB of the file, their lengths known from
// the size: every frame is checked before it is used, so nothing unsigned is ever written, and no
// frame can be dropped, moved or taken from another transfer.
import { Transform, type TransformCallback } from "node:stream";
import { FrameMacs, frameLabels, frameMacBytes, signedFrameBytes } from "../agent/signed-frames.ts";

/** The header that carries a streamed body's file size, both ways. */
export const fileSizeHeader = "lab-agent-file-size";

export function framedLength(size: number): number {
  return size + Math.ceil(size / signedFrameBytes) * frameMacBytes;
}

/** The file's bytes in, signed frames out: for an upload. */
export class SignFrames extends Transform {
  /** Less than a frame, waiting for more. */
  private rest: Buffer = Buffer.alloc(0);
  private readonly macs: FrameMacs;

  constructor(key: string, nonce: string) {
    super();
    this.macs = new FrameMacs(key, frameLabels.upload, nonce);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    // Only the short rest is copied: a chunk of many frames is cut into views of itself.
    const buffer = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
    let offset = 0;
    for (; buffer.length - offset >= signedFrameBytes; offset += signedFrameBytes) {
      this.pushFrame(buffer.subarray(offset, offset + signedFrameBytes));
    }
    this.rest = Buffer.from(buffer.subarray(offset));
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.rest.length > 0) this.pushFrame(this.rest);
    done();
  }

  private pushFrame(data: Buffer): void {
    this.push(this.macs.sign(data));
    this.push(data);
  }
}

/** Raised when a frame of a download does not verify, or the download ends before its size. */
export class BrokenFramesError extends Error {}

/** Signed frames in, the file's bytes out: for a download of `size` bytes. */
export class VerifyFrames extends Transform {
  private buffered: Buffer = Buffer.alloc(0);
  private readonly macs: FrameMacs;
  private left: number;

  constructor(key: string, nonce: string, size: number) {
    super();
    this.macs = new FrameMacs(key, frameLabels.download, nonce);
    this.left = size;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      const length = Math.min(this.left, signedFrameBytes);
      if (length === 0) {
        if (this.buffered.length > 0) return done(new BrokenFramesError("more bytes than the file's size"));
        return done();
      }
      if (this.buffered.length < frameMacBytes + length) return done();
      const index = this.macs.next;
      const data = this.buffered.subarray(frameMacBytes, frameMacBytes + length);
      if (!this.macs.verify(this.buffered.subarray(0, frameMacBytes), data)) {
        return done(new BrokenFramesError(`frame ${index} is not signed with the session's key`));
      }
      this.push(Buffer.from(data));
      this.buffered = this.buffered.subarray(frameMacBytes + length);
      this.left -= length;
    }
  }

  override _flush(done: TransformCallback): void {
    if (this.left > 0) return done(new BrokenFramesError(`the file ended ${this.left} bytes early`));
    done();
  }
}
