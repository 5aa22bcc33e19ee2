// Token buckets by key (a client address, a user name): a burst, then a steady rate. Used where a
// request is costly or guessable (sign-in hashes a password; a launch creates a VM), and answered
// with 429, Retry-After and words a person can act on.
import type { ErrorReason } from "../../common/error-reasons.ts";
import { tooSoon } from "../errors/domain-error.ts";

/** What a throttle says when it refuses: its reason, and its English sentence for a wait. */
export interface Refusal {
  reason: ErrorReason;
  message: (seconds: number) => string;
}

export interface RateLimit {
  /** Requests allowed at once after a quiet spell. */
  burst: number;
  /** Then one more every this many milliseconds. */
  refillMs: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Keys idle long enough to have a full bucket are forgotten once there are this many. */
const pruneAbove = 10_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until `key` may go again; 0 when it may go now. Takes nothing. */
  waitSeconds(key: string): number {
    const tokens = this.tokensOf(key);
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil(((1 - tokens) * this.limit.refillMs) / 1000));
  }

  /** Uses one request of `key`'s allowance. */
  take(key: string): void {
    this.set(key, this.tokensOf(key) - 1);
  }

  /**
   * Takes one of `key`'s allowance if it has one, before the costly or guessable work, so that
   * concurrent requests cannot all pass a check made before any of them took. Never takes what is
   * not there: however many are refused, the wait after them stays at most one refill period.
   */
  tryTake(key: string): boolean {
    const tokens = this.tokensOf(key);
    if (tokens < 1) return false;
    this.set(key, tokens - 1);
    return true;
  }

  /** Gives back one taken by tryTake, as if that request had not counted; never above the burst. */
  giveBack(key: string): void {
    this.set(key, Math.min(this.limit.burst, this.tokensOf(key) + 1));
  }

  /** Takes one for `key`, or refuses with 429 and Retry-After when it has none left. */
  takeOrRefuse(key: string, refusal: Refusal): void {
    refuseWhileLimited(this.waitSeconds(key), refusal);
    this.take(key);
  }

  private set(key: string, tokens: number): void {
    if (tokens >= this.limit.burst - 1 && this.buckets.size >= pruneAbove) this.prune();
    this.buckets.set(key, { tokens, updatedAt: this.now() });
  }

  private tokensOf(key: string): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return this.limit.burst;
    const now = this.now();
    // A clock set back (NTP, a test's clock) refills from then on instead of draining the bucket.
    if (now < bucket.updatedAt) bucket.updatedAt = now;
    const refilled = (now - bucket.updatedAt) / this.limit.refillMs;
    return Math.min(this.limit.burst, bucket.tokens + refilled);
  }

  private prune(): void {
    for (const key of [...this.buckets.keys()]) {
      if (this.tokensOf(key) >= this.limit.burst) this.buckets.delete(key);
    }
  }
}

/** Throws the too-soon refusal (a 429 with Retry-After) when `seconds` is above 0. */
export function refuseWhileLimited(seconds: number, refusal: Refusal): void {
  if (seconds > 0) throw tooSoon(refusal.reason, seconds, refusal.message(seconds));
}
