// How many launches may be under way at once, from the bound on the BFF's API writes
// (kube/write-rate.ts): each launch in flight will write, so the writes already promised say how
// long a new launch would wait for its turn. Past a wait of 15 s it is refused at once with a time to
// come back, rather than left hanging on a spinner. Those refused are told times one after another,
// as tickets: all told "in 3 s" would come back together and be refused together again. Counted per
// replica, as the write bound is.
import { DomainError } from "../errors/domain-error.ts";
import type { WriteRateLimits } from "../kube/write-rate.ts";

/** Longer than this in the write queue, and a launch is refused with when to try again. */
export const maxLaunchWaitMs = 15_000;

export class LaunchGate {
  private promisedWrites = 0;
  /** When the last launch refused was told to come back, on the gate's clock. */
  private lastTicketAt = 0;
  private readonly room: number;

  constructor(
    private readonly limits: WriteRateLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.room = limits.burst + (limits.perSecond * maxLaunchWaitMs) / 1000;
  }

  /** Lets a launch that will make `writes` writes go, or throws launch_busy; call the result when it is done. */
  enter(writes: number): () => void {
    const over = this.promisedWrites + writes - this.room;
    if (over > 0) throw this.refusal(over, writes);
    this.promisedWrites += writes;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.promisedWrites -= writes;
    };
  }

  private refusal(over: number, writes: number): DomainError {
    const now = this.now();
    const msPerWrite = 1000 / this.limits.perSecond;
    // The queue has room again once the writes over it are done; the tickets before this one take
    // their share of that room first.
    const at = Math.max(now + over * msPerWrite, this.lastTicketAt + writes * msPerWrite);
    this.lastTicketAt = at;
    const seconds = Math.max(1, Math.ceil((at - now) / 1000));
    return new DomainError(
      "unavailable",
      "launch_busy",
      `Many sessions are starting at once. Try again in ${seconds} s.`,
      { seconds },
      seconds,
    );
  }
}
