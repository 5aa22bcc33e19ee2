// A bound on how fast this BFF writes to the Kubernetes API: a token bucket that every create, patch,
// update and delete of its cluster client waits on. 300 students pressing Launch at once then reach
// the API server as a steady stream it can take, not as one spike that its priority-and-fairness
// queues would reject with 429s for everyone. Reads are not bounded here: they come from the watch
// caches. Lease renewals have a client of their own (kube/leases.ts), so they never wait behind a burst.

export interface WriteRateLimits {
  /** Writes per second, sustained. */
  perSecond: number;
  /** Writes that may go at once after a quiet spell. */
  burst: number;
}

/**
 * 50 writes a second, 100 at once. A cold launch is two writes (the VM, then its Secret) and a claim of
 * a warm VM one, so 300 cold launches take about 10 s of writes and 300 claims about 4 s. Each write
 * holds one of the API server's mutating seats (200 by default, --max-mutating-requests-inflight) for
 * some 10 to 50 ms: at 50 a second the BFF holds two or three of them, and KubeVirt's controllers,
 * which then create a VMI and a launcher pod for every VM, keep the rest. The real bottleneck of a
 * burst is the scheduler and the nodes pulling images, not these writes.
 */
export const defaultWriteRateLimits: WriteRateLimits = { perSecond: 50, burst: 100 };

export class WriteRate {
  private tokens: number;
  private refilledAt: number;
  /** Tokens promised to writes that are waiting: each takes the next one in order. */
  private waiting = 0;

  constructor(
    readonly limits: WriteRateLimits = defaultWriteRateLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = limits.burst;
    this.refilledAt = this.now();
  }

  /** How long `count` more writes would wait behind the ones already waiting, in ms. */
  private waitMs(count: number): number {
    this.refill();
    const short = this.waiting + count - this.tokens;
    return short <= 0 ? 0 : (short / this.limits.perSecond) * 1000;
  }

  /** Resolves when this write may go, with that moment on the bound's clock. */
  async take(): Promise<number> {
    const wait = this.waitMs(1);
    this.waiting += 1;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const now = this.refill();
    this.waiting -= 1;
    this.tokens -= 1;
    return now;
  }

  private refill(): number {
    const now = this.now();
    const elapsed = (now - this.refilledAt) / 1000;
    this.refilledAt = now;
    this.tokens = Math.min(this.limits.burst, this.tokens + elapsed * this.limits.perSecond);
    return now;
  }
}
