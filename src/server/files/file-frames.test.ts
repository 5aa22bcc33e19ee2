import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { frameMac, signedFrameBytes } from "../agent/signed-frames.ts";
import { BrokenFramesError, framedLength, SignFrames, VerifyFrames } from "./file-frames.ts";

const key = "a-session-key-of-64-hex-digits-or-so-for-these-tests";
const nonce = "0123456789abcdef0123456789abcdef";

/** A download as the agent frames it. */
function answerFrames(
  data: Buffer,
  kind: "lab-agent-answer-frame:v1" | "lab-agent-frame:v1" = "lab-agent-answer-frame:v1",
) {
  const frames: Buffer[] = [];
  for (let index = 0; index * signedFrameBytes < data.length; index++) {
    const part = data.subarray(index * signedFrameBytes, (index + 1) * signedFrameBytes);
    frames.push(Buffer.concat([frameMac(key, kind, nonce, index, part), part]));
  }
  return frames;
}

async function verified(frames: Buffer[], size: number, chunkBytes = 7000): Promise<Buffer> {
  const all = Buffer.concat(frames);
  const chunks = Array.from({ length: Math.ceil(all.length / chunkBytes) }, (_, index) =>
    all.subarray(index * chunkBytes, (index + 1) * chunkBytes),
  );
  const verify = new VerifyFrames(key, nonce, size);
  const [out] = await Promise.all([buffer(verify), pipeline(Readable.from(chunks), verify)]);
  return out;
}

describe("signed frames", () => {
  it("frames an upload the same however its bytes arrive", async () => {
    const data = randomBytes(3 * signedFrameBytes + 1234);
    const expected = Buffer.concat(answerFrames(data, "lab-agent-frame:v1"));
    for (const chunkBytes of [1000, signedFrameBytes, data.length]) {
      const chunks = Array.from({ length: Math.ceil(data.length / chunkBytes) }, (_, index) =>
        data.subarray(index * chunkBytes, (index + 1) * chunkBytes),
      );
      const sign = new SignFrames(key, nonce);
      const [out] = await Promise.all([buffer(sign), pipeline(Readable.from(chunks), sign)]);
      expect(out.equals(expected)).toBe(true);
      expect(out.length).toBe(framedLength(data.length));
    }
  });

  it("passes a download's bytes once every frame verifies", async () => {
    const data = randomBytes(2 * signedFrameBytes + 10);
    expect((await verified(answerFrames(data), data.length)).equals(data)).toBe(true);
  });

  it("refuses a changed, moved, missing or reflected frame", async () => {
    const data = randomBytes(2 * signedFrameBytes + 10);
    const frames = answerFrames(data);
    const changed = frames.map((frame) => Buffer.from(frame));
    changed[1]![40]! ^= 1;
    const attempts = {
      changed,
      moved: [frames[1]!, frames[0]!, frames[2]!],
      missing: [frames[0]!, frames[1]!],
      // An upload's frames sent back as a download's.
      reflected: answerFrames(data, "lab-agent-frame:v1"),
    };
    for (const [what, attempt] of Object.entries(attempts)) {
      await expect(verified(attempt, data.length), what).rejects.toBeInstanceOf(BrokenFramesError);
    }
  });
});
