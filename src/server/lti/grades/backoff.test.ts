import { describe, expect, it } from "vitest";
import { defaultBackoff, retryDelayMs } from "./backoff.ts";

describe("the wait before a score is tried again", () => {
  it("starts at 30 s and doubles up to an hour", () => {
    expect([1, 2, 3, 4, 7, 8, 50].map((failures) => retryDelayMs(defaultBackoff, failures))).toEqual([
      30_000, 60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000,
    ]);
  });

  it("honours Retry-After when it asks for longer, up to six hours", () => {
    expect(retryDelayMs(defaultBackoff, 1, 90_000)).toBe(90_000);
    expect(retryDelayMs(defaultBackoff, 3, 1_000)).toBe(120_000);
    expect(retryDelayMs(defaultBackoff, 1, 7 * 24 * 3_600_000)).toBe(6 * 3_600_000);
  });
});
