import { describe, expect, it } from "vitest";
import { buildScore } from "../testing/lti-data.ts";
import { formatScore, scoreProgress } from "./score-text.ts";

describe("score text", () => {
  it("writes a score as given over maximum, with the locale's numbers", () => {
    const english = new Intl.NumberFormat("en").format;
    expect(formatScore(buildScore({ scoreGiven: 8, scoreMaximum: 10 }), english)).toBe("8 / 10");
    expect(formatScore(buildScore({ scoreGiven: 7.5, scoreMaximum: 1000 }), english)).toBe("7.5 / 1,000");
    expect(formatScore(buildScore({ scoreGiven: 0, scoreMaximum: 4 }), english)).toBe("0 / 4");
  });

  it("says when a posted score was posted", () => {
    const postedAt = "2026-03-01T10:00:05.000Z";
    expect(scoreProgress(buildScore({ state: "posted", postedAt }))).toEqual({
      kind: "posted",
      at: postedAt,
    });
  });

  it("says when a pending score's next attempt is, or that it waits its first", () => {
    const nextAttemptAt = "2026-03-01T10:05:00.000Z";
    expect(scoreProgress(buildScore({ state: "pending", postedAt: null, nextAttemptAt }))).toEqual({
      kind: "next-attempt",
      at: nextAttemptAt,
    });
    expect(scoreProgress(buildScore({ state: "pending", postedAt: null, nextAttemptAt: null }))).toEqual({
      kind: "queued",
    });
  });

  it("gives a refused score no time: the LMS's reason stands in for it", () => {
    const refused = buildScore({ state: "refused", postedAt: null, lastError: "Course is not published" });
    expect(scoreProgress(refused)).toEqual({ kind: "refused" });
  });
});
