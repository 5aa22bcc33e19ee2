// How a file's bytes cross the wire to and from the agent (docs/agent.md, "Files"). A body the size
// of a file cannot be hashed before it is sent without holding it, so a streamed request signs its
// size, and the bytes follow in frames of 64 KiB, each after the MAC of its bytes, its index and the
// request's nonce: every frame is checked before it is used, so nothing unsigned is ever written,
// and no frame can be dropped, moved or taken from another transfer.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";
import { agentAuthScheme, type SignedRequest } from "../agent/signature.ts";

export const frameBytes = 64 * 1024;
const macBytes = 32;

/** The header that carries a streamed body's file size, both ways. */
export const fileSizeHeader = "lab-agent-file-size";

type FrameKind = "lab-agent-frame:v1" | "lab-agent-answer-frame:v1";

export function framedLength(size: number): number {
  return size + Math.ceil(size / frameBytes) * macBytes;
}

export function signStreamRequest(key: string, method: string, target: string, size: number): SignedRequest {
  const nonce = randomBytes(16).toString("hex");
  const mac = hmacHex(key, ["lab-agent-stream-request:v1", method, target, nonce, String(size)]);
  return { authorization: `${agentAuthScheme} nonce=${nonce}, mac=${mac}`, nonce };
}

/** True when `mac` is the agent's signature of a streamed answer of `size` bytes to `nonce`. */
export function verifyStreamAnswer(
  key: string,
  nonce: string,
  status: number,
  size: number,
  mac: string | undefined,
): boolean {
  if (mac === undefined || !/^[0-9a-f]{64}$/.test(mac)) return false;
  const expected = streamAnswerMac(key, nonce, status, size);
  return timingSafeEqual(Buffer.from(mac, "hex"), Buffer.from(expected, "hex"));
}

/** What the agent puts in the header of a streamed answer; exported for tests that play the agent. */
export function streamAnswerMac(key: string, nonce: string, status: number, size: number): string {
  return hmacHex(key, ["lab-agent-stream-response:v1", nonce, String(status), String(size)]);
}

export function frameMac(key: string, kind: FrameKind, nonce: string, index: number, data: Buffer): Buffer {
  return createHmac("sha256", key).update(`${kind}\n${nonce}\n${index}\n`).update(data).digest();
}

/** The file's bytes in, signed frames out: for an upload. */
export class SignFrames extends Transform {
  /** Less than a frame, waiting for more. */
  private rest: Buffer = Buffer.alloc(0);
  private index = 0;

  constructor(
    private readonly key: string,
    private readonly nonce: string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    // Only the short rest is copied: a chunk of many frames is cut into views of itself.
    const buffer = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
    let offset = 0;
    for (; buffer.length - offset >= frameBytes; offset += frameBytes) {
      this.pushFrame(buffer.subarray(offset, offset + frameBytes));
    }
    this.rest = Buffer.from(buffer.subarray(offset));
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.rest.length > 0) this.pushFrame(this.rest);
    done();
  }

  private pushFrame(data: Buffer): void {
    this.push(frameMac(this.key, "lab-agent-frame:v1", this.nonce, this.index++, data));
    this.push(data);
  }
}

/** Raised when a frame of a download does not verify, or the download ends before its size. */
export class BrokenFramesError extends Error {}

/** Signed frames in, the file's bytes out: for a download of `size` bytes. */
export class VerifyFrames extends Transform {
  private buffered: Buffer = Buffer.alloc(0);
  private index = 0;
  private left: number;

  constructor(
    private readonly key: string,
    private readonly nonce: string,
    size: number,
  ) {
    super();
    this.left = size;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    for (;;) {
      const length = Math.min(this.left, frameBytes);
      if (length === 0) {
        if (this.buffered.length > 0) return done(new BrokenFramesError("more bytes than the file's size"));
        return done();
      }
      if (this.buffered.length < macBytes + length) return done();
      const mac = this.buffered.subarray(0, macBytes);
      const data = this.buffered.subarray(macBytes, macBytes + length);
      const expected = frameMac(this.key, "lab-agent-answer-frame:v1", this.nonce, this.index, data);
      if (!timingSafeEqual(mac, expected)) {
        return done(new BrokenFramesError(`frame ${this.index} is not signed with the session's key`));
      }
      this.push(Buffer.from(data));
      this.buffered = this.buffered.subarray(macBytes + length);
      this.index += 1;
      this.left -= length;
    }
  }

  override _flush(done: TransformCallback): void {
    if (this.left > 0) return done(new BrokenFramesError(`the file ended ${this.left} bytes early`));
    done();
  }
}

function hmacHex(key: string, lines: string[]): string {
  return createHmac("sha256", key).update(lines.join("\n")).digest("hex");
}
