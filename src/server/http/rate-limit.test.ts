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

describe("RateLimiter reservations", () => {
  it("takes only what is there, so a bucket never goes below empty, and gives back what was taken", () => {
    let now = 0;
    const limiter = new RateLimiter({ burst: 2, refillMs: 30_000 }, () => now);
    expect(limiter.tryTake("carol")).toBe(true);
    expect(limiter.tryTake("carol")).toBe(true);
    // A hundred more attempts at once take nothing: none of them digs the bucket deeper.
    for (let attempt = 0; attempt < 100; attempt += 1) expect(limiter.tryTake("carol")).toBe(false);
    expect(limiter.waitSeconds("carol")).toBe(30);
    now = 30_000;
    expect(limiter.tryTake("carol")).toBe(true);
    // Given back (a right password): as if that attempt had not been made.
    limiter.giveBack("carol");
    expect(limiter.waitSeconds("carol")).toBe(0);
    // Never more than the burst.
    now = 600_000;
    limiter.giveBack("carol");
    limiter.giveBack("carol");
    expect(limiter.tryTake("carol")).toBe(true);
    expect(limiter.tryTake("carol")).toBe(true);
    expect(limiter.tryTake("carol")).toBe(false);
  });

  it("does not take back from a key whose clock went backwards", () => {
    let now = 60_000;
    const limiter = new RateLimiter({ burst: 1, refillMs: 1_000 }, () => now);
    expect(limiter.tryTake("alice")).toBe(true);
    now = 0;
    expect(limiter.waitSeconds("alice")).toBe(1);
    now = 1_000;
    expect(limiter.tryTake("alice")).toBe(true);
  });
});
