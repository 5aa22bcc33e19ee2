import { describe, expect, it } from "vitest";
import { TokenBucket } from "./token-bucket.ts";

describe("TokenBucket", () => {
  it("lets a burst through, then asks to wait as long as the refill of the debt takes", () => {
    let now = 0;
    const bucket = new TokenBucket(1000, 500, () => now);
    expect(bucket.take(600)).toBe(0);
    expect(bucket.take(400)).toBe(0);
    expect(bucket.take(250)).toBe(500);
    now += 500;
    expect(bucket.take(0)).toBe(0);
  });

  it("never saves more than its capacity", () => {
    let now = 0;
    const bucket = new TokenBucket(100, 100, () => now);
    now += 60_000;
    expect(bucket.take(100)).toBe(0);
    expect(bucket.take(50)).toBe(500);
  });
});
