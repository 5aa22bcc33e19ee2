// How long the emulated lifecycle steps take. "realistic" follows the field notes (Pending at 0 s,
// Scheduled at 10 s, Running at 20 s, then 30 to 120 s of guest boot before cloud-init's runcmd);
// "fast" keeps the same order well under a second, for tests.
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
  /** How long one second of a VMI's terminationGracePeriodSeconds lasts (a paused guest waits it out). */
  gracePeriodSecond: number;
  /** A pause or unpause -> virt-handler's next sync of the VMI, which shows it in the Paused condition. */
  toPausedCondition: number;
  /**
   * VMI Running -> cloud-init's runcmd: the kernel, systemd and cloud-init's earlier stages on a real
   * guest. Each VMI gets a time in this range, always the same for the same VMI name.
   */
  toRuncmd: { minMs: number; maxMs: number };
}

export function timingsFor(mode: TimingMode, overrides: Partial<Timings> = {}): Timings {
  const timings: Timings =
    mode === "realistic"
      ? {
          toScheduling: 1000,
          toScheduled: 9000,
          toRunning: 10_000,
          toStopped: 3000,
          backoffSecond: 1000,
          gracePeriodSecond: 1000,
          toPausedCondition: 500,
          toRuncmd: { minMs: 30_000, maxMs: 120_000 },
        }
      : {
          toScheduling: 5,
          toScheduled: 15,
          toRunning: 15,
          toStopped: 10,
          backoffSecond: 10,
          gracePeriodSecond: 10,
          toPausedCondition: 100,
          toRuncmd: { minMs: 0, maxMs: 0 },
        };
  return { ...timings, ...overrides };
}

/** The VMI's time from Running to runcmd: spread over the range by a hash of its name (FNV-1a). */
export function runcmdDelayMs(timings: Timings, vmiName: string): number {
  const { minMs, maxMs } = timings.toRuncmd;
  if (maxMs <= minMs) return minMs;
  let hash = 0x811c9dc5;
  for (const char of vmiName) {
    hash ^= char.codePointAt(0) ?? 0;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return minMs + (hash % (maxMs - minMs + 1));
}
