import { describe, expect, it } from "vitest";
import { reconnectCapMs, reconnectDelayMs } from "./reconnect-backoff.ts";

describe("reconnectDelayMs", () => {
  it("doubles from half a second and stops at the cap", () => {
    const middle = () => 0.5;
    expect([0, 1, 2, 3].map((attempt) => reconnectDelayMs(attempt, middle))).toEqual([500, 1000, 2000, 4000]);
    expect(reconnectDelayMs(10, middle)).toBe(reconnectCapMs);
    expect(reconnectDelayMs(1000, middle)).toBe(reconnectCapMs);
  });

  it("spreads retries by up to a fifth either way", () => {
    expect(reconnectDelayMs(1, () => 0)).toBe(800);
    expect(reconnectDelayMs(1, () => 1)).toBe(1200);
  });
});
