// How long a lease lasts and how its holder keeps it, as client-go's leader election defaults them.
// The holder gives up after renewDeadlineMs without a renewal, before anyone else may take the
// lease (leaseDurationSeconds after they last saw it change), so two holders never overlap.

export interface LeaseTiming {
  leaseDurationSeconds: number;
  /** The holder steps down when it could not renew for this long. Must be below the lease duration. */
  renewDeadlineMs: number;
  /** Between renewals, and between attempts to take the lease. */
  retryPeriodMs: number;
}

export const defaultLeaseTiming: LeaseTiming = {
  leaseDurationSeconds: 15,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

export function checkLeaseTiming(timing: LeaseTiming): void {
  if (!Number.isInteger(timing.leaseDurationSeconds) || timing.leaseDurationSeconds < 1) {
    throw new Error("leaseDurationSeconds must be a whole number of seconds, at least 1");
  }
  if (timing.renewDeadlineMs >= timing.leaseDurationSeconds * 1000) {
    throw new Error("renewDeadlineMs must be shorter than the lease duration");
  }
  if (timing.retryPeriodMs >= timing.renewDeadlineMs) {
    throw new Error("retryPeriodMs must be shorter than renewDeadlineMs");
  }
}

/** One knob for operators: renewals every 2/15 of the duration, giving up after 2/3 (15 s: 2 s, 10 s). */
export function leaseTimingFor(leaseDurationSeconds: number): LeaseTiming {
  const durationMs = leaseDurationSeconds * 1000;
  return {
    leaseDurationSeconds,
    renewDeadlineMs: Math.round((durationMs * 2) / 3),
    retryPeriodMs: Math.round((durationMs * 2) / 15),
  };
}
