// How many warm VMs a class holds at each point of its day.
import { describe, expect, it } from "vitest";
import { bootingFrom, defaultPoolTiming, poolTarget, reserveOf } from "./pool-plan.ts";
import type { ClassRecord } from "./repository.ts";

const minute = 60_000;
const start = Date.parse("2030-03-02T09:00:00Z");
const aClass: ClassRecord = {
  id: "c1",
  labId: "linux-basics",
  startsAt: start,
  endsAt: start + 120 * minute,
  expected: 40,
  createdBy: "ivan",
  createdAt: start - 24 * 60 * minute,
};
const at = (minutes: number, claimed = 0) =>
  poolTarget(aClass, claimed, start + minutes * minute, defaultPoolTiming);

describe("a class's warm pool target", () => {
  it("holds nothing until the lead time before the start, and nothing once the class is over", () => {
    expect(at(-16)).toBe(0);
    expect(at(120)).toBe(0);
    expect(at(500)).toBe(0);
  });

  it("holds one VM per expected student from the lead time on, less those who launched", () => {
    expect(at(-15)).toBe(40);
    expect(at(-1, 10)).toBe(30);
    expect(at(10, 30)).toBe(10);
  });

  it("never holds fewer than the reserve while latecomers come, for students nobody expected", () => {
    expect(at(5, 40)).toBe(4);
    expect(at(5, 55)).toBe(4);
  });

  it("keeps only the reserve once the arrivals are over", () => {
    expect(at(16, 0)).toBe(4);
    expect(at(119, 40)).toBe(4);
  });

  it("says booting starts with the lead time, or when the class was scheduled if that came later", () => {
    expect(bootingFrom(aClass, defaultPoolTiming)).toBe(start - 15 * minute);
    const scheduledLate = { ...aClass, createdAt: start - 5 * minute };
    expect(bootingFrom(scheduledLate, defaultPoolTiming)).toBe(start - 5 * minute);
    // The pool boots for it at once: its window opened before it was scheduled.
    expect(poolTarget(scheduledLate, 0, scheduledLate.createdAt, defaultPoolTiming)).toBe(40);
  });

  it("reserves a tenth of the class, at least two, never more than the class", () => {
    expect(reserveOf(1)).toBe(1);
    expect(reserveOf(5)).toBe(2);
    expect(reserveOf(40)).toBe(4);
    expect(reserveOf(301)).toBe(31);
  });
});
