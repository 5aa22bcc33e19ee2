import { describe, expect, it } from "vitest";
import { expiryWarningLevel } from "./expiry-warning-level.ts";

const minute = 60_000;

describe("expiryWarningLevel", () => {
  it("warns at 10, 5 and 1 minutes left, and not before or after the end", () => {
    expect(expiryWarningLevel(30 * minute)).toBeNull();
    expect(expiryWarningLevel(10 * minute + 1)).toBeNull();
    expect(expiryWarningLevel(10 * minute)).toBe(10);
    expect(expiryWarningLevel(5 * minute + 1)).toBe(10);
    expect(expiryWarningLevel(5 * minute)).toBe(5);
    expect(expiryWarningLevel(61_000)).toBe(5);
    expect(expiryWarningLevel(minute)).toBe(1);
    expect(expiryWarningLevel(1000)).toBe(1);
    expect(expiryWarningLevel(0)).toBeNull();
  });
});
