// The launch gate on a clock the test moves: launches go while the write queue has room, then each
// refused launch gets its own time to come back, later than the one before.
import { describe, expect, it } from "vitest";
import { DomainError } from "../errors/domain-error.ts";
import { LaunchGate } from "./launch-gate.ts";

const limits = { perSecond: 20, burst: 40 };

function refusalOf(attempt: () => unknown): DomainError {
  try {
    attempt();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("the launch was let through");
}

describe("the launch gate", () => {
  it("lets launches through until their writes would wait more than 15 s, and again once some are done", () => {
    const gate = new LaunchGate(limits, () => 0);
    // 40 at once plus 15 s at 20 a second: 340 writes, 170 cold launches.
    const leaves = Array.from({ length: 170 }, () => gate.enter(2));
    const refused = refusalOf(() => gate.enter(2));
    expect(refused).toMatchObject({ kind: "unavailable", reason: "launch_busy", retryAfterSeconds: 1 });
    leaves[0]!();
    leaves[0]!();
    expect(() => gate.enter(2)()).not.toThrow();
  });

  it("tells those refused times one after another, so they do not all come back at once", () => {
    let now = 0;
    const gate = new LaunchGate(limits, () => now);
    for (let index = 0; index < 170; index++) gate.enter(2);
    const waits = Array.from({ length: 30 }, () => refusalOf(() => gate.enter(2)).retryAfterSeconds!);
    expect(waits[0]).toBe(1);
    expect(waits.at(-1)).toBe(3);
    expect([...waits].sort((a, b) => a - b)).toEqual(waits);
    // Later, with the queue as full as before: the tickets start from now, not from the old ones.
    now = 60_000;
    expect(refusalOf(() => gate.enter(2)).retryAfterSeconds).toBe(1);
  });
});
