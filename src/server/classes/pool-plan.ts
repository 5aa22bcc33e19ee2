// How many warm VMs a scheduled class should have waiting at a given moment. Pure, so the schedule's
// every phase is tested without a clock.
import type { ClassRecord } from "./repository.ts";

export interface PoolTiming {
  /** Booting starts this long before the class: a cold VM takes 20 s to Running, then its boot. */
  leadMs: number;
  /** After the start, latecomers still come for this long: the pool keeps room for all expected. */
  arrivalsMs: number;
}

export const defaultPoolTiming: PoolTiming = { leadMs: 15 * 60_000, arrivalsMs: 15 * 60_000 };

/** The small reserve kept for the rest of the class: a tenth of the class, at least 2. */
export function reserveOf(expected: number): number {
  return Math.min(expected, Math.max(2, Math.ceil(expected / 10)));
}

export function warmFrom(record: ClassRecord, timing: PoolTiming): number {
  return record.startsAt - timing.leadMs;
}

/**
 * When the pool starts booting the class's VMs, as people are told: the start of its window, or the
 * moment the class was scheduled when that came later (a class scheduled 5 minutes ahead boots on the
 * pool's next pass, not 15 minutes before its start, which is past).
 */
export function bootingFrom(record: ClassRecord, timing: PoolTiming): number {
  return Math.max(warmFrom(record, timing), record.createdAt);
}

/**
 * Unclaimed VMs to hold now: none outside the window; before the start and while latecomers come,
 * one for every expected student who has not launched yet (never fewer than the reserve, for the
 * unexpected ones); then the reserve.
 */
export function poolTarget(record: ClassRecord, claimed: number, now: number, timing: PoolTiming): number {
  if (now < warmFrom(record, timing) || now >= record.endsAt) return 0;
  const stillToCome = Math.max(0, record.expected - claimed);
  const reserve = reserveOf(record.expected);
  return now < record.startsAt + timing.arrivalsMs ? Math.max(stillToCome, reserve) : reserve;
}
