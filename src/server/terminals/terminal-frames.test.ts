import { describe, expect, it } from "vitest";
import {
  BadTerminalFrameError,
  TerminalFrameReader,
  TerminalFrameSigner,
  terminalFrameBytes,
  terminalFrameTypes,
} from "./terminal-frames.ts";

const key = "a-session-key-for-frame-tests";
const nonce = "0123456789abcdef0123456789abcdef";

function twoFrames(): Buffer {
  const signer = new TerminalFrameSigner(key, nonce, "out");
  return Buffer.concat([
    signer.frame(terminalFrameTypes.data, Buffer.from("hello, ")),
    signer.frame(terminalFrameTypes.data, Buffer.alloc(terminalFrameBytes, 0x61)),
  ]);
}

describe("terminal frames", () => {
  it("reads the frames however the stream cuts them, one byte at a time included", () => {
    const stream = twoFrames();
    for (const piece of [stream.length, 1, 7, 4096]) {
      const reader = new TerminalFrameReader(key, nonce, "out");
      const frames = [];
      for (let at = 0; at < stream.length; at += piece)
        frames.push(...reader.push(stream.subarray(at, at + piece)));
      expect(frames.map((frame) => frame.payload.length)).toEqual([7, terminalFrameBytes]);
      expect(frames[0]!.payload.toString()).toBe("hello, ");
    }
  });

  it("refuses a frame signed for the other direction, out of its place, or with another key", () => {
    const stream = twoFrames();
    expect(() => new TerminalFrameReader(key, nonce, "in").push(stream)).toThrow(BadTerminalFrameError);
    expect(() => new TerminalFrameReader("another-key-entirely", nonce, "out").push(stream)).toThrow(
      BadTerminalFrameError,
    );
    const first = stream.subarray(0, 32 + 5 + 7);
    const reader = new TerminalFrameReader(key, nonce, "out");
    reader.push(first);
    // The same frame again is frame 1 now, which it was not signed as.
    expect(() => reader.push(first)).toThrow(BadTerminalFrameError);
  });

  it("refuses a changed byte and a length over the cap before waiting for its payload", () => {
    const stream = twoFrames();
    stream.writeUInt8(stream.readUInt8(32 + 5) ^ 1, 32 + 5);
    expect(() => new TerminalFrameReader(key, nonce, "out").push(stream)).toThrow(BadTerminalFrameError);
    const head = Buffer.alloc(37);
    head.writeUInt32BE(terminalFrameBytes + 1, 33);
    expect(() => new TerminalFrameReader(key, nonce, "out").push(head)).toThrow(/a frame of 65537 bytes/);
  });
});
