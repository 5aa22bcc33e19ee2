// Which replicas are alive, and where their peers reach them. Each replica holds a lease of its own,
// `replica-<identity>` with its endpoint in an annotation, renewed like a leader's lease; a replica
// counts as alive until its lease went unrenewed for the lease duration as seen from here. Leases
// of replicas that died long ago are swept away, as are console leases they held.
import type { LeaseClient, LeaseRecord } from "../kube/leases.ts";
import { LeaderElector } from "./leader-elector.ts";
import { endpointAnnotation, labelsFor, leaseKindLabel } from "./lease-labels.ts";
import { LeaseLock } from "./lease-lock.ts";
import type { LeaseObservations } from "./lease-observations.ts";
import type { CoordinationLog } from "./log.ts";
import type { LeaseTiming } from "./timing.ts";

export interface Peer {
  identity: string;
  /** Base URL of the replica's internal endpoint, e.g. http://10.244.1.7:8080. */
  endpoint: string;
}

export function replicaLeaseName(identity: string): string {
  return `replica-${identity}`;
}

export interface MembershipOptions {
  leases: LeaseClient;
  identity: string;
  endpoint: string;
  timing: LeaseTiming;
  observations: LeaseObservations;
  log: CoordinationLog;
  /** This replica could not renew its own lease in time: the others may now act as if it were gone. */
  onLost(): void;
  /** Called after each look at the other leases, to sweep what dead replicas left behind. */
  onSweep?(isAlive: (identity: string) => Promise<boolean>): Promise<void>;
}

// Leases of replicas dead this many lease durations are deleted (a crashed pod leaves its lease).
const sweepAfterDurations = 4;

export class Membership {
  private readonly elector: LeaderElector;
  private readonly known = new Map<string, LeaseRecord>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private listedOnce = false;
  private announced = false;
  private failedLooks = 0;
  private readonly waiting = new Set<() => void>();

  constructor(private readonly options: MembershipOptions) {
    this.elector = new LeaderElector({
      lock: new LeaseLock({
        leases: options.leases,
        name: replicaLeaseName(options.identity),
        identity: options.identity,
        leaseDurationSeconds: options.timing.leaseDurationSeconds,
        labels: labelsFor("replica"),
        annotations: { [endpointAnnotation]: options.endpoint },
        observations: options.observations,
      }),
      timing: options.timing,
      onStartedLeading: () => {
        this.announced = true;
        this.wakeWaiters();
      },
      onStoppedLeading: () => {
        this.announced = false;
        if (!this.stopped) options.onLost();
      },
      giveUp: "delete",
      log: options.log,
    });
  }

  get endpoint(): string {
    return this.options.endpoint;
  }

  /** Whether the others see this replica alive right now. */
  get alive(): boolean {
    return this.elector.isLeader;
  }

  start(): void {
    this.elector.start();
    void this.look();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.elector.stop();
    this.wakeWaiters();
  }

  /** Resolves once this replica is announced and has seen the others; false when that took too long. */
  ready(timeoutMs: number): Promise<boolean> {
    if (this.isReady()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve(this.isReady());
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiting.add(done);
    });
  }

  /** The live replica of this identity (this one included), or undefined when it is gone. */
  async peer(identity: string): Promise<Peer | undefined> {
    if (identity === this.options.identity) {
      return this.alive ? { identity, endpoint: this.options.endpoint } : undefined;
    }
    let lease = this.known.get(identity);
    if (!lease) {
      // Joined since the last look: ask, rather than take it for dead.
      lease = await this.options.leases.get(replicaLeaseName(identity));
      if (!lease) return undefined;
      this.known.set(identity, lease);
    }
    if (this.options.observations.isFree(lease)) return undefined;
    const endpoint = lease.annotations[endpointAnnotation];
    return endpoint ? { identity, endpoint } : undefined;
  }

  private isReady(): boolean {
    return this.stopped || (this.announced && this.listedOnce);
  }

  private wakeWaiters(): void {
    if (!this.isReady()) return;
    for (const waiter of [...this.waiting]) waiter();
  }

  private async look(): Promise<void> {
    const { leases, observations, timing, log } = this.options;
    try {
      const replicas = await leases.list(`${leaseKindLabel}=replica`);
      this.known.clear();
      for (const lease of replicas) {
        observations.observe(lease);
        this.known.set(lease.holderIdentity || lease.name, lease);
      }
      this.listedOnce = true;
      this.wakeWaiters();
      const deadFor = sweepAfterDurations * timing.leaseDurationSeconds * 1000;
      for (const lease of replicas) {
        if (lease.holderIdentity === this.options.identity) continue;
        if (observations.isFree(lease) && observations.unchangedForMs(lease) >= deadFor) {
          await leases.remove(lease.name, lease.resourceVersion);
          observations.forget(lease.name);
        }
      }
      await this.options.onSweep?.(async (identity) => (await this.peer(identity)) !== undefined);
      this.failedLooks = 0;
    } catch (error) {
      // Once is noise; said again every minute or so while it lasts.
      this.failedLooks += 1;
      if (this.failedLooks % 30 === 2) log.warn({ err: error }, "cannot list the other replicas; retrying");
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.look(), timing.retryPeriodMs);
  }
}
