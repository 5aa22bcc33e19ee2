import { describe, expect, it } from "vitest";
import type { Session, SessionList } from "../../../../common/api.ts";
import {
  changingPollMs,
  sessionListPollMs,
  sessionPollMs,
  stablePollMs,
  waitingHandPollMs,
} from "./session-polling.ts";
import { aSession } from "../../../testing/data-generators.ts";

function buildList(items: Session[], counts: Partial<SessionList["counts"]> = {}): SessionList {
  const allCounts = { starting: 0, running: 0, stopping: 0, failed: 0, ...counts };
  return { items, total: items.length, page: 1, pageSize: 50, counts: allCounts, stale: false };
}

describe("session polling", () => {
  it("polls a single session fast while it starts or stops, slowly when running", () => {
    expect(sessionPollMs(aSession({ status: "starting" }))).toBe(changingPollMs);
    expect(sessionPollMs(aSession({ status: "stopping" }))).toBe(changingPollMs);
    expect(sessionPollMs(aSession({ status: "running" }))).toBe(stablePollMs);
  });

  it("polls a session under a second while its raised hand waits, and slowly once it is answered", () => {
    const help = { raisedAt: "2026-01-01T10:05:00.000Z", note: "stuck" };
    expect(sessionPollMs(aSession({ help: { ...help, acknowledgedBy: null } }))).toBe(waitingHandPollMs);
    expect(waitingHandPollMs).toBeLessThan(1000);
    expect(sessionPollMs(aSession({ help: { ...help, acknowledgedBy: "tara" } }))).toBe(stablePollMs);
  });

  it("keeps the slow period between 9 and 11 s so tabs drift apart", () => {
    expect(stablePollMs).toBeGreaterThanOrEqual(9000);
    expect(stablePollMs).toBeLessThanOrEqual(11_000);
  });

  it("polls a list fast when any session on any page is changing", () => {
    expect(sessionListPollMs(buildList([aSession()], { running: 1 }))).toBe(stablePollMs);
    expect(sessionListPollMs(buildList([aSession({ status: "starting" })]))).toBe(changingPollMs);
    expect(sessionListPollMs(buildList([aSession()], { running: 1, stopping: 3 }))).toBe(changingPollMs);
  });
});
