// One lease, acquired and renewed the way client-go's leader election does it: read, and write back
// naming the resourceVersion read, so of two replicas racing for a free lease exactly one wins (the
// other gets a 409). While held, renewals write on top of the last version written, saving the read.
import type { LeaseClient, LeaseRecord, LeaseSpecWrite } from "../kube/leases.ts";
import { KubeStatusError } from "../kube/errors.ts";
import { LeaseObservations } from "./lease-observations.ts";

export interface LeaseLockOptions {
  leases: LeaseClient;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Shared between locks that read the same leases; default: the lock's own. */
  observations?: LeaseObservations;
  /** The wall clock written into acquireTime and renewTime. */
  now?: () => Date;
}

/** The lease as last read or written, with whether this replica holds it now. */
export type LeaseOutcome =
  { held: true; lease: LeaseRecord } | { held: false; lease: LeaseRecord | undefined };

export class LeaseLock {
  /** What this replica last wrote while holding the lease. */
  private mine: LeaseRecord | undefined;
  private readonly observations: LeaseObservations;
  private readonly now: () => Date;

  constructor(private readonly options: LeaseLockOptions) {
    this.observations = options.observations ?? new LeaseObservations();
    this.now = options.now ?? (() => new Date());
  }

  get name(): string {
    return this.options.name;
  }

  /** Takes the lease if it is free or ran out, renews it if held. Rejects when the API does not answer. */
  async tryAcquireOrRenew(): Promise<LeaseOutcome> {
    const { leases, name, identity } = this.options;
    const now = this.now();
    if (this.mine) {
      try {
        return this.won(await leases.replace(this.spec(now, this.mine), this.mine.resourceVersion));
      } catch (error) {
        // Someone wrote it since: read what they wrote. Anything else: still ours, try again later.
        if (!isConflict(error)) throw error;
        this.mine = undefined;
      }
    }
    const current = await leases.get(name);
    if (!current) {
      try {
        return this.won(await leases.create(this.spec(now, undefined)));
      } catch (error) {
        if (isConflict(error)) return { held: false, lease: undefined };
        throw error;
      }
    }
    const ours = current.holderIdentity === identity;
    if (!ours && !this.observations.isFree(current)) return { held: false, lease: current };
    try {
      return this.won(
        await leases.replace(this.spec(now, ours ? current : undefined, current), current.resourceVersion),
      );
    } catch (error) {
      if (isConflict(error)) return { held: false, lease: current };
      throw error;
    }
  }

  /** Gives the lease up at once (as client-go's ReleaseOnCancel does), so a successor need not wait it out. */
  async release(): Promise<void> {
    const mine = this.mine;
    if (!mine) return;
    this.mine = undefined;
    try {
      await this.options.leases.replace(
        { ...this.spec(this.now(), mine), holderIdentity: "", leaseDurationSeconds: 1 },
        mine.resourceVersion,
      );
    } catch (error) {
      // Taken meanwhile: nothing left to give up.
      if (!isConflict(error)) throw error;
    }
  }

  /** Deletes the lease if it is still as this replica last wrote it (for leases of passing things). */
  async remove(): Promise<void> {
    const mine = this.mine;
    if (!mine) return;
    this.mine = undefined;
    await this.options.leases.remove(mine.name, mine.resourceVersion);
  }

  private won(lease: LeaseRecord): LeaseOutcome {
    this.mine = lease;
    this.observations.observe(lease);
    return { held: true, lease };
  }

  /**
   * The record to write: `held` is our own current record (renewal keeps acquireTime and the
   * transition count); otherwise a new term starts, counting one more transition than `previous`.
   */
  private spec(now: Date, held: LeaseRecord | undefined, previous?: LeaseRecord): LeaseSpecWrite {
    const { name, identity, leaseDurationSeconds, labels, annotations } = this.options;
    return {
      name,
      holderIdentity: identity,
      leaseDurationSeconds,
      acquireTime: held?.acquireTime ? new Date(held.acquireTime) : now,
      renewTime: now,
      leaseTransitions: held ? held.leaseTransitions : previous ? previous.leaseTransitions + 1 : 0,
      ...(labels ? { labels } : {}),
      ...(annotations ? { annotations } : {}),
    };
  }
}

function isConflict(error: unknown): boolean {
  return error instanceof KubeStatusError && error.statusCode === 409;
}
