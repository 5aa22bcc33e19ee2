// Leadership of one named lease: keeps trying to take it, renews it while leading, and calls
// onStoppedLeading as soon as it cannot be sure it still leads (another holder, or no renewal
// within the renew deadline, even while a request hangs). Start and stop callbacks never overlap.
import type { LeaseLock } from "./lease-lock.ts";
import type { CoordinationLog } from "./log.ts";
import type { LeaseTiming } from "./timing.ts";

export interface LeaderElectorOptions {
  lock: LeaseLock;
  timing: LeaseTiming;
  onStartedLeading(): void;
  onStoppedLeading(): Promise<void> | void;
  /**
   * At stop, "release" leaves the lease for the next candidate at once (a duty); "delete" removes
   * it (a lease nobody else will ever want, like a replica's own).
   */
  giveUp?: "release" | "delete";
  log: CoordinationLog;
}

// Candidates retry a little apart, so that they do not all ask at the same moment.
const candidateJitter = 0.2;

export class LeaderElector {
  private leading = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private attempt: Promise<void> | undefined;
  private transitions: Promise<void> = Promise.resolve();
  private failures = 0;

  constructor(private readonly options: LeaderElectorOptions) {}

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops competing; if leading, stops the work first, then releases the lease for a quick handover. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    // A request hanging on an unreachable API server must not hold up shutdown for long.
    await Promise.race([this.attempt, delay(this.options.timing.renewDeadlineMs)]);
    const wasLeading = this.leading;
    this.stepDown("shutting down");
    await this.transitions;
    if (!wasLeading) return;
    try {
      if (this.options.giveUp === "delete") await this.options.lock.remove();
      else await this.options.lock.release();
    } catch (error) {
      this.options.log.warn({ err: error, lease: this.options.lock.name }, "could not release the lease");
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.attempt = this.tryOnce().finally(() => {
        this.attempt = undefined;
      });
    }, delayMs);
  }

  private async tryOnce(): Promise<void> {
    const { lock, timing, log } = this.options;
    const sentAt = performance.now();
    try {
      const outcome = await lock.tryAcquireOrRenew();
      this.failures = 0;
      if (this.stopped) return;
      if (outcome.held) {
        this.renewed(sentAt);
      } else if (this.leading) {
        // Someone else could only take it once ours had run out: whatever we do now is not ours to do.
        this.stepDown(`taken over by ${outcome.lease?.holderIdentity ?? "another replica"}`);
      }
    } catch (error) {
      this.failures += 1;
      // Once is noise (a restarting API server); the renew deadline decides what it means.
      if (this.failures === 2) log.warn({ err: error, lease: lock.name }, "cannot reach the lease; retrying");
    }
    const jitter = this.leading ? 1 : 1 + Math.random() * candidateJitter;
    this.schedule(timing.retryPeriodMs * jitter);
  }

  private renewed(sentAt: number): void {
    const { timing } = this.options;
    clearTimeout(this.deadline);
    // Counted from when the renewal was sent: the lease ran from no earlier than that.
    const remaining = sentAt + timing.renewDeadlineMs - performance.now();
    this.deadline = setTimeout(() => this.stepDown("no renewal within the renew deadline"), remaining);
    if (this.leading) return;
    this.leading = true;
    this.options.log.info({ lease: this.options.lock.name }, "this replica now leads");
    this.chain(() => this.options.onStartedLeading());
  }

  private stepDown(reason: string): void {
    clearTimeout(this.deadline);
    if (!this.leading) return;
    this.leading = false;
    this.options.log.info({ lease: this.options.lock.name, reason }, "this replica no longer leads");
    this.chain(() => this.options.onStoppedLeading());
  }

  private chain(step: () => Promise<void> | void): void {
    this.transitions = this.transitions
      .then(step)
      .catch((error: unknown) =>
        this.options.log.warn({ err: error, lease: this.options.lock.name }, "leadership callback failed"),
      );
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
