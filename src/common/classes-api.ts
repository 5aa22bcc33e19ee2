// Scheduled classes: an instructor says when a lab's class runs and how many students to expect, and
// the BFF has that many VMs booted and waiting at the start (docs/operations.md, "Warm pools").
import * as z from "zod/mini";

/** Students one class may expect: the pool never holds more VMs than this for it. */
export const maxExpectedStudents = 500;
/** A class lasts at most this long: a warm pool is for the start of a lab, not a standing reserve. */
export const maxClassHours = 12;

export const NewClass = z.object({
  labId: z.string().check(z.minLength(1), z.maxLength(40)),
  startsAt: z.iso.datetime({ offset: true }),
  endsAt: z.iso.datetime({ offset: true }),
  expected: z.number().check(z.int(), z.minimum(1), z.maximum(maxExpectedStudents)),
});
export type NewClass = z.output<typeof NewClass>;

/** How a class's warm pool stands: counted from the cluster's VMs on every read. */
export const WarmPoolCounts = z.object({
  /** Booted, agent answering: a launch claims one of these. */
  ready: z.number(),
  /** Created, not yet ready. */
  booting: z.number(),
  /** Launches that claimed a warm VM of this class so far (sessions still running). */
  claimed: z.number(),
});
export type WarmPoolCounts = z.output<typeof WarmPoolCounts>;

export const ScheduledClass = z.object({
  id: z.string(),
  labId: z.string(),
  startsAt: z.string(),
  endsAt: z.string(),
  expected: z.number(),
  createdBy: z.string(),
  createdAt: z.string(),
  /**
   * When the pool starts booting VMs: the start minus the lead time, or when the class was scheduled
   * if that was later (then it is already past).
   */
  warmFrom: z.string(),
  /** What the pool aims to hold unclaimed now: 0 outside the class's window. */
  target: z.number(),
  pool: WarmPoolCounts,
});
export type ScheduledClass = z.output<typeof ScheduledClass>;

export const ClassList = z.object({ items: z.array(ScheduledClass) });
export type ClassList = z.output<typeof ClassList>;
