// What the console's replicas agree on through leases (docs/scaling.md): duties only one of them
// performs at a time (the reaper, the grading worker), and which replica holds each VM's console.
// A console running alone gets the same interface with every duty and every console its own, so
// the code using it reads the same either way.
import type { LeaseClient } from "../kube/leases.ts";
import { LeaseConsoleOwnership, localConsoleOwnership, type ConsoleOwnership } from "./console-ownership.ts";
import { LeaderElector } from "./leader-elector.ts";
import { labelsFor } from "./lease-labels.ts";
import { LeaseLock } from "./lease-lock.ts";
import { LeaseObservations } from "./lease-observations.ts";
import type { CoordinationLog } from "./log.ts";
import { Membership } from "./membership.ts";
import { checkLeaseTiming, defaultLeaseTiming, type LeaseTiming } from "./timing.ts";

export interface DutyWork {
  start(): void;
  stop(): Promise<void> | void;
}

export interface Duty {
  /** Whether this replica performs the duty right now. */
  readonly held: boolean;
  /** Competes for the duty: `work.start` runs once it is won, `work.stop` once lost and at close. */
  perform(work: DutyWork): void;
}

export interface Coordination {
  /** False when the console runs alone: every duty and console is its own. */
  readonly replicated: boolean;
  readonly identity: string;
  /** Where the leases live; undefined when the console runs alone. */
  readonly leaseNamespace: string | undefined;
  /** The duty guarded by the lease of this name (e.g. `lab-console-reaper`). */
  duty(name: string): Duty;
  readonly consoles: ConsoleOwnership;
  /** Joins the other replicas, reachable at `endpoint` (a base URL); call once listening. */
  announce(endpoint: string): void;
  /**
   * Stops the work of every duty held and gives up every lease, so the others take over at once.
   * Call after the consoles closed.
   */
  close(): Promise<void>;
}

/** The reaper's duty: one replica deletes the VMs of expired sessions. */
export const reaperLeaseName = "lab-console-reaper";

export function soloCoordination(): Coordination {
  const performed: DutyWork[] = [];
  let closed = false;
  return {
    replicated: false,
    identity: "solo",
    leaseNamespace: undefined,
    duty: () => ({
      held: true,
      perform(work) {
        if (closed) return;
        performed.push(work);
        work.start();
      },
    }),
    consoles: localConsoleOwnership(),
    announce: () => undefined,
    async close() {
      closed = true;
      await Promise.all(performed.map((work) => work.stop()));
    },
  };
}

export interface LeaseCoordinationOptions {
  leases: LeaseClient;
  identity: string;
  timing?: LeaseTiming;
  log: CoordinationLog;
}

export function createLeaseCoordination(options: LeaseCoordinationOptions): Coordination {
  const { leases, identity, log } = options;
  const timing = options.timing ?? defaultLeaseTiming;
  checkLeaseTiming(timing);
  const observations = new LeaseObservations();
  const electors: LeaderElector[] = [];
  let membership: Membership | undefined;
  let closed = false;
  const consoles = new LeaseConsoleOwnership({
    leases,
    identity,
    leaseDurationSeconds: timing.leaseDurationSeconds,
    membership: () => membership,
    readyTimeoutMs: timing.renewDeadlineMs,
    log,
  });

  return {
    replicated: true,
    identity,
    leaseNamespace: leases.namespace,
    consoles,
    duty(name) {
      let elector: LeaderElector | undefined;
      return {
        get held() {
          return elector?.isLeader ?? false;
        },
        perform(work) {
          if (closed || elector) return;
          elector = new LeaderElector({
            lock: new LeaseLock({
              leases,
              name,
              identity,
              leaseDurationSeconds: timing.leaseDurationSeconds,
              labels: labelsFor("duty"),
              observations,
            }),
            timing,
            onStartedLeading: () => work.start(),
            onStoppedLeading: () => work.stop(),
            log,
          });
          electors.push(elector);
          elector.start();
        },
      };
    },
    announce(endpoint) {
      if (closed || membership) return;
      membership = new Membership({
        leases,
        identity,
        endpoint,
        timing,
        observations,
        log,
        onLost: () => consoles.lost(),
        onSweep: (isAlive) => consoles.sweep(isAlive),
      });
      membership.start();
    },
    async close() {
      closed = true;
      await Promise.all(electors.map((elector) => elector.stop()));
      await consoles.releaseAll();
      await membership?.stop();
    },
  };
}
