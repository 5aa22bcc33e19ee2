// Which replica holds each VM's console connection. KubeVirt allows one per VMI (a second kicks the
// first), so the replica that opens it holds the lease `console-<session id>` and the others hand
// their browsers over to it. A console lease is never renewed: it stands while its holder is alive
// (its replica lease, see membership.ts), so open consoles cost no writes. The lease of a holder
// that died is taken over by the next replica a browser reaches.
import type { LeaseClient, LeaseRecord, LeaseSpecWrite } from "../kube/leases.ts";
import { KubeStatusError } from "../kube/errors.ts";
import { DomainError } from "../errors/domain-error.ts";
import { endpointAnnotation, labelsFor, leaseKindLabel } from "./lease-labels.ts";
import type { CoordinationLog } from "./log.ts";
import type { Membership, Peer } from "./membership.ts";

export type ConsoleHome = { kind: "here" } | { kind: "peer"; peer: Peer };

export interface ConsoleOwnership {
  /**
   * Finds where the session's console lives, taking its lease when it is free, and runs `use` with
   * the answer before any release of the same session can interleave. Rejects with
   * ConsoleUnavailableError when the cluster cannot be asked.
   */
  claim<T>(sessionId: string, use: (home: ConsoleHome) => T): Promise<T>;
  /** The console closed here: its lease goes, unless `stillOpen()` says it was opened again meanwhile. */
  release(sessionId: string, stillOpen: () => boolean): Promise<void>;
  /** Called when this replica may have lost its consoles to others: it must close its own. */
  onLost(listener: () => void): void;
}

/** The cluster cannot be asked who holds a console: a refusal for now, not a fault of the request. */
export class ConsoleUnavailableError extends DomainError {
  constructor(override readonly cause?: unknown) {
    super(
      "unavailable",
      "console_cluster_unreachable",
      "The console cannot be opened right now: Lab Console cannot reach the cluster. Try again in a moment.",
    );
  }
}

export const sessionLabel = "labconsole.dev/session";

export function consoleLeaseName(sessionId: string): string {
  return `console-${sessionId}`;
}

/** For a console running alone: every console is its own. */
export function localConsoleOwnership(): ConsoleOwnership {
  return {
    claim: async (_sessionId, use) => use({ kind: "here" }),
    release: async () => undefined,
    onLost: () => undefined,
  };
}

export interface LeaseConsoleOwnershipOptions {
  leases: LeaseClient;
  identity: string;
  leaseDurationSeconds: number;
  /** Undefined until the replica announced itself (it listens). */
  membership: () => Membership | undefined;
  /** How long a claim waits for the replica to be announced. */
  readyTimeoutMs: number;
  log: CoordinationLog;
}

const claimAttempts = 3;

export class LeaseConsoleOwnership implements ConsoleOwnership {
  /** What this replica last wrote to each console lease it holds. */
  private readonly held = new Map<string, LeaseRecord>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly lostListeners = new Set<() => void>();
  private lastSweep = 0;

  constructor(private readonly options: LeaseConsoleOwnershipOptions) {}

  claim<T>(sessionId: string, use: (home: ConsoleHome) => T): Promise<T> {
    return this.serially(sessionId, async () => use(await this.decide(sessionId)));
  }

  release(sessionId: string, stillOpen: () => boolean): Promise<void> {
    return this.serially(sessionId, async () => {
      const mine = this.held.get(sessionId);
      if (!mine || stillOpen()) return;
      this.held.delete(sessionId);
      try {
        await this.options.leases.remove(mine.name, mine.resourceVersion);
      } catch (error) {
        // Left behind, it is taken over or swept once this replica is gone; here it is harmless.
        this.options.log.warn({ err: error, session: sessionId }, "could not delete a console lease");
      }
    });
  }

  onLost(listener: () => void): void {
    this.lostListeners.add(listener);
  }

  /** The replica's membership lapsed: others may have taken its consoles over. */
  lost(): void {
    this.held.clear();
    for (const listener of this.lostListeners) listener();
  }

  /** At shutdown, after the consoles closed: what is still held goes, so others take over at once. */
  async releaseAll(): Promise<void> {
    const held = [...this.held.values()];
    this.held.clear();
    await Promise.allSettled(
      held.map((lease) => this.options.leases.remove(lease.name, lease.resourceVersion)),
    );
  }

  /** Deletes console leases whose holder is gone, now and then (crashed replicas leave them). */
  async sweep(isAlive: (identity: string) => Promise<boolean>): Promise<void> {
    const now = performance.now();
    if (now - this.lastSweep < 4 * this.options.leaseDurationSeconds * 1000) return;
    this.lastSweep = now;
    for (const lease of await this.options.leases.list(`${leaseKindLabel}=console`)) {
      if (lease.holderIdentity === this.options.identity) continue;
      if (lease.holderIdentity === "" || !(await isAlive(lease.holderIdentity))) {
        await this.options.leases.remove(lease.name, lease.resourceVersion);
      }
    }
  }

  private async decide(sessionId: string): Promise<ConsoleHome> {
    const { leases, identity, log } = this.options;
    const membership = this.options.membership();
    try {
      if (!membership || !(await membership.ready(this.options.readyTimeoutMs)) || !membership.alive) {
        throw new ConsoleUnavailableError();
      }
      const name = consoleLeaseName(sessionId);
      for (let attempt = 0; attempt < claimAttempts; attempt++) {
        const lease = await leases.get(name);
        if (!lease) {
          const created = await this.written(() => leases.create(this.spec(sessionId, 0)));
          if (created) return this.holding(sessionId, created);
          continue;
        }
        if (lease.holderIdentity === identity) return this.holding(sessionId, lease);
        const peer = lease.holderIdentity === "" ? undefined : await membership.peer(lease.holderIdentity);
        if (peer) {
          this.held.delete(sessionId);
          return { kind: "peer", peer };
        }
        const taken = await this.written(() =>
          leases.replace(this.spec(sessionId, lease.leaseTransitions + 1), lease.resourceVersion),
        );
        if (taken) {
          log.info(
            { session: sessionId, from: lease.holderIdentity },
            "took over a console whose replica is gone",
          );
          return this.holding(sessionId, taken);
        }
      }
      throw new Error(`the lease ${name} kept changing`);
    } catch (error) {
      throw error instanceof ConsoleUnavailableError ? error : new ConsoleUnavailableError(error);
    }
  }

  private holding(sessionId: string, lease: LeaseRecord): ConsoleHome {
    this.held.set(sessionId, lease);
    return { kind: "here" };
  }

  /** The lease as written, or undefined when another replica wrote it first (409). */
  private async written(write: () => Promise<LeaseRecord>): Promise<LeaseRecord | undefined> {
    try {
      return await write();
    } catch (error) {
      if (error instanceof KubeStatusError && error.statusCode === 409) return undefined;
      throw error;
    }
  }

  private spec(sessionId: string, leaseTransitions: number): LeaseSpecWrite {
    const now = new Date();
    const membership = this.options.membership();
    const endpoint = membership?.endpoint;
    return {
      name: consoleLeaseName(sessionId),
      holderIdentity: this.options.identity,
      leaseDurationSeconds: this.options.leaseDurationSeconds,
      acquireTime: now,
      renewTime: now,
      leaseTransitions,
      labels: { ...labelsFor("console"), [sessionLabel]: sessionId },
      ...(endpoint ? { annotations: { [endpointAnnotation]: endpoint } } : {}),
    };
  }

  private serially<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(sessionId) ?? Promise.resolve();
    const next = previous.then(work);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(sessionId, settled);
    void settled.then(() => {
      if (this.queues.get(sessionId) === settled) this.queues.delete(sessionId);
    });
    return next;
  }
}
