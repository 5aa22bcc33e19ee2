// Token buckets by key (a client address, a user name): a burst, then a steady rate. Used where a
// request is costly or guessable (sign-in hashes a password; a launch creates a VM), and answered
// with 429, Retry-After and words a person can act on.
import type { FastifyReply } from "fastify";
import { HttpError } from "./errors.ts";

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
    const tokens = this.tokensOf(key);
    if (tokens >= this.limit.burst && this.buckets.size >= pruneAbove) this.prune();
    this.buckets.set(key, { tokens: tokens - 1, updatedAt: this.now() });
  }

  /** Takes one for `key`, or refuses with 429 and Retry-After when it has none left. */
  takeOrRefuse(key: string, reply: FastifyReply, message: (seconds: number) => string): void {
    refuseWhileLimited(this.waitSeconds(key), reply, message);
    this.take(key);
  }

  private tokensOf(key: string): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return this.limit.burst;
    const refilled = (this.now() - bucket.updatedAt) / this.limit.refillMs;
    return Math.min(this.limit.burst, bucket.tokens + refilled);
  }

  private prune(): void {
    for (const key of [...this.buckets.keys()]) {
      if (this.tokensOf(key) >= this.limit.burst) this.buckets.delete(key);
    }
  }
}

/** Throws the 429 (with Retry-After) when `seconds` is above 0. */
export function refuseWhileLimited(
  seconds: number,
  reply: FastifyReply,
  message: (seconds: number) => string,
): void {
  if (seconds <= 0) return;
  reply.header("retry-after", String(seconds));
  throw new HttpError(429, "rate_limited", message(seconds));
}
