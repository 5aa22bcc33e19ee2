// How long the emulated lifecycle steps take. "realistic" follows the field notes (Pending at 0 s,
// Scheduled at 10 s, Running at 20 s); "fast" keeps the same order well under a second, for tests.
export type TimingMode = "realistic" | "fast";

export interface Timings {
  /** VMI created -> launcher pod created (phase Scheduling). */
  toScheduling: number;
  /** Pod bound to a node -> pod running, VMI Scheduled. */
  toScheduled: number;
  /** Scheduled -> guest booted, VMI Running. */
  toRunning: number;
  /** Stop requested -> guest shut down, VMI Succeeded. */
  toStopped: number;
  /** How long one second of virt-controller's start-failure backoff lasts. */
  backoffSecond: number;
}

export function timingsFor(mode: TimingMode): Timings {
  return mode === "realistic"
    ? { toScheduling: 1000, toScheduled: 9000, toRunning: 10_000, toStopped: 3000, backoffSecond: 1000 }
    : { toScheduling: 5, toScheduled: 15, toRunning: 15, toStopped: 10, backoffSecond: 10 };
}
