import { describe, expect, it } from "vitest";
import { formatCoarse, formatElapsed, formatTimeLeft } from "./durations.ts";

describe("formatElapsed", () => {
  it("counts seconds through a slow VM start", () => {
    expect(formatElapsed(0, "en")).toBe("0 sec");
    expect(formatElapsed(20_400, "en")).toBe("20 sec");
    expect(formatElapsed(119_999, "en")).toBe("119 sec");
  });

  it("switches to minutes after two minutes and never goes negative on clock skew", () => {
    expect(formatElapsed(125_000, "en")).toBe("2 min");
    expect(formatElapsed(-3_000, "en")).toBe("0 sec");
  });
});

describe("formatCoarse", () => {
  it("shows minutes, then hours with minutes", () => {
    expect(formatCoarse(30_000, "en")).toBe("< 1 min");
    expect(formatCoarse(59 * 60_000, "en")).toBe("59 min");
    expect(formatCoarse(60 * 60_000, "en")).toBe("1 hr");
    expect(formatCoarse(65 * 60_000, "en")).toBe("1 hr, 5 min");
  });

  it("uses the words of each language", () => {
    expect(formatCoarse(65 * 60_000, "ja")).toBe("1 時間 5 分");
    expect(formatCoarse(65 * 60_000, "zh-CN")).toBe("1小时5分钟");
    expect(formatElapsed(20_000, "ja")).toBe("20 秒");
    expect(formatElapsed(20_000, "zh-CN")).toBe("20秒");
  });
});

describe("formatTimeLeft", () => {
  it("counts the last minute in seconds and gives null when time is up", () => {
    expect(formatTimeLeft(45 * 60_000, "en")).toBe("45 min");
    expect(formatTimeLeft(59_100, "en")).toBe("60 sec");
    expect(formatTimeLeft(1_000, "en")).toBe("1 sec");
    expect(formatTimeLeft(0, "en")).toBeNull();
  });
});
