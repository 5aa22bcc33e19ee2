// When a score the LMS could not take is tried again: 30 s after the first failure, doubling up to an
// hour, or later when the LMS says so (Retry-After), though never later than a few hours: a platform
// asking for a week is broken, and the instructor should see the score tried again today.
export interface Backoff {
  firstMs: number;
  maxMs: number;
  /** The longest Retry-After honoured. */
  maxRetryAfterMs: number;
}

export const defaultBackoff: Backoff = {
  firstMs: 30_000,
  maxMs: 60 * 60_000,
  maxRetryAfterMs: 6 * 60 * 60_000,
};

/** The wait after the `failures`-th failure in a row (1 for the first). */
export function retryDelayMs(backoff: Backoff, failures: number, retryAfterMs?: number): number {
  const doubled = Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
  return Math.max(doubled, Math.min(retryAfterMs ?? 0, backoff.maxRetryAfterMs));
}
