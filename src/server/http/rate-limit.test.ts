import { describe, expect, it } from "vitest";
import { RateLimiter } from "./rate-limit.ts";

describe("RateLimiter", () => {
  it("allows a burst, then one per refill period, per key", () => {
    let now = 0;
    const limiter = new RateLimiter({ burst: 3, refillMs: 2_000 }, () => now);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect(limiter.waitSeconds("10.0.0.1")).toBe(0);
      limiter.take("10.0.0.1");
    }
    expect(limiter.waitSeconds("10.0.0.1")).toBe(2);
    // Another key has its own allowance.
    expect(limiter.waitSeconds("10.0.0.2")).toBe(0);

    now = 1_500;
    expect(limiter.waitSeconds("10.0.0.1")).toBe(1);
    now = 2_000;
    expect(limiter.waitSeconds("10.0.0.1")).toBe(0);
    limiter.take("10.0.0.1");
    expect(limiter.waitSeconds("10.0.0.1")).toBe(2);

    // A long quiet spell refills the burst, never more.
    now = 60_000;
    for (let attempt = 0; attempt < 3; attempt += 1) limiter.take("10.0.0.1");
    expect(limiter.waitSeconds("10.0.0.1")).toBe(2);
  });
});
