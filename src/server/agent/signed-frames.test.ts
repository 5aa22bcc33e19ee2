import { describe, expect, it } from "vitest";
import { FrameMacs, frameLabels, frameMacBytes } from "./signed-frames.ts";

const key = "a-session-key-for-these-tests-only";
const nonce = "0123456789abcdef0123456789abcdef";
const frames = [Buffer.from("first"), Buffer.from("second")];

function signed(label: string, nonceOf = nonce): Buffer[] {
  const signer = new FrameMacs(key, label, nonceOf);
  return frames.map((frame) => signer.sign(frame));
}

describe("signed frames", () => {
  it("verifies a stream's frames in the order they were signed", () => {
    const reader = new FrameMacs(key, frameLabels.download, nonce);
    const macs = signed(frameLabels.download);
    expect(frames.map((frame, index) => reader.verify(macs[index]!, frame))).toEqual([true, true]);
    expect(reader.next).toBe(2);
  });

  it("refuses a frame moved to another place, another stream or another request", () => {
    const [first, second] = signed(frameLabels.upload);
    expect(new FrameMacs(key, frameLabels.upload, nonce).verify(second!, frames[1]!)).toBe(false);
    expect(new FrameMacs(key, frameLabels.download, nonce).verify(first!, frames[0]!)).toBe(false);
    expect(new FrameMacs(key, frameLabels.upload, "another-nonce").verify(first!, frames[0]!)).toBe(false);
  });

  it("keeps a terminal's two directions apart", () => {
    const [typed] = signed(frameLabels.terminal("in"));
    expect(new FrameMacs(key, frameLabels.terminal("out"), nonce).verify(typed!, frames[0]!)).toBe(false);
  });

  it("signs the bytes of all the parts, in order, as one frame", () => {
    const whole = new FrameMacs(key, frameLabels.upload, nonce).sign(Buffer.from("firstsecond"));
    expect(new FrameMacs(key, frameLabels.upload, nonce).verify(whole, ...frames)).toBe(true);
    expect(new FrameMacs(key, frameLabels.upload, nonce).verify(whole, frames[1]!, frames[0]!)).toBe(false);
  });

  it("refuses a MAC of the wrong length instead of throwing", () => {
    const [first] = signed(frameLabels.upload);
    const short = first!.subarray(0, frameMacBytes - 1);
    expect(new FrameMacs(key, frameLabels.upload, nonce).verify(short, frames[0]!)).toBe(false);
  });
});
