import { describe, expect, it } from "vitest";
import { buildScore, buildScoreList } from "../testing/lti-data.ts";
import { pendingPollMs, scoreListPollMs, settledPollMs } from "./score-polling.ts";

describe("score list polling", () => {
  it("polls fast while any score waits to be posted", () => {
    expect(scoreListPollMs(buildScoreList([buildScore({ state: "pending" })]))).toBe(pendingPollMs);
  });

  it("follows pending scores the state filter hides, by the counts", () => {
    const refusedOnly = buildScoreList([buildScore({ state: "refused" })], { pending: 2 });
    expect(scoreListPollMs(refusedOnly)).toBe(pendingPollMs);
  });

  it("polls slowly once everything is posted or refused, and before the first answer", () => {
    const settled = buildScoreList([buildScore({ state: "posted" }), buildScore({ state: "refused" })]);
    expect(scoreListPollMs(settled)).toBe(settledPollMs);
    expect(scoreListPollMs(undefined)).toBe(settledPollMs);
    expect(pendingPollMs).toBeLessThan(settledPollMs);
  });
});
