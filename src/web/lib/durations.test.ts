import { describe, expect, it } from "vitest";
import { formatCoarse, formatElapsed, formatTimeLeft } from "./durations.ts";

describe("formatElapsed", () => {
  it("counts seconds through a slow VM start", () => {
    expect(formatElapsed(0)).toBe("0 s");
    expect(formatElapsed(20_400)).toBe("20 s");
    expect(formatElapsed(119_999)).toBe("119 s");
  });

  it("switches to minutes after two minutes and never goes negative on clock skew", () => {
    expect(formatElapsed(125_000)).toBe("2 min");
    expect(formatElapsed(-3_000)).toBe("0 s");
  });
});

describe("formatCoarse", () => {
  it("shows minutes, then hours with minutes", () => {
    expect(formatCoarse(30_000)).toBe("< 1 min");
    expect(formatCoarse(59 * 60_000)).toBe("59 min");
    expect(formatCoarse(60 * 60_000)).toBe("1 h");
    expect(formatCoarse(65 * 60_000)).toBe("1 h 5 min");
  });
});

describe("formatTimeLeft", () => {
  it("counts the last minute in seconds and says when time is up", () => {
    expect(formatTimeLeft(45 * 60_000)).toBe("45 min");
    expect(formatTimeLeft(59_100)).toBe("60 s");
    expect(formatTimeLeft(1_000)).toBe("1 s");
    expect(formatTimeLeft(0)).toBe("expired");
  });
});
