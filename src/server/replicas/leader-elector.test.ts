// Leader election over the emulator's Leases, as the BFF's service account under deploy/base's RBAC:
// one leader among candidates, a quick handover on release, takeover after a crashed holder's lease
// ran out, and a leader that loses the API steps down before anyone else may start.
import { patient } from "../../common/testing/patience.ts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { createLeaseClient, type LeaseClient } from "../kube/leases.ts";
import { LeaderElector } from "./leader-elector.ts";
import { LeaseLock } from "./lease-lock.ts";
import type { LeaseTiming } from "./timing.ts";

const timing: LeaseTiming = { leaseDurationSeconds: 1, renewDeadlineMs: 600, retryPeriodMs: 100 };
const quiet = { info: () => undefined, warn: () => undefined };

let cluster: TestEmulator;
let leases: LeaseClient;
const running: LeaderElector[] = [];
let leaseCounter = 0;

/** Leading intervals of every candidate, from its start callback to the end of its stop callback. */
interface Candidate {
  identity: string;
  elector: LeaderElector;
  startedAt: number[];
  stoppedAt: number[];
}

function candidate(lease: string, identity: string, withTiming: LeaseTiming = timing): Candidate {
  const record: Candidate = {
    identity,
    elector: undefined as unknown as LeaderElector,
    startedAt: [],
    stoppedAt: [],
  };
  record.elector = new LeaderElector({
    lock: new LeaseLock({
      leases,
      name: lease,
      identity,
      leaseDurationSeconds: withTiming.leaseDurationSeconds,
    }),
    timing: withTiming,
    onStartedLeading: () => record.startedAt.push(performance.now()),
    onStoppedLeading: () => {
      record.stoppedAt.push(performance.now());
    },
    log: quiet,
  });
  running.push(record.elector);
  record.elector.start();
  return record;
}

function leaderOf(candidates: Candidate[]): Candidate | undefined {
  const leaders = candidates.filter((each) => each.elector.isLeader);
  expect(leaders.length).toBeLessThanOrEqual(1);
  return leaders[0];
}

function freshLease(): string {
  leaseCounter += 1;
  return `test-duty-${leaseCounter}`;
}

beforeAll(async () => {
  cluster = await startTestEmulator({ deployRbac: true });
  leases = createLeaseClient(cluster.bffKubeConfig(), { namespace: "lab-console" });
});

afterEach(async () => {
  cluster.emulator.faults.reset();
  await Promise.all(running.splice(0).map((elector) => elector.stop()));
});

afterAll(async () => {
  await cluster.close();
});

describe("LeaderElector", () => {
  it("lets exactly one of three candidates lead, and hands over at once when it stops", async () => {
    const lease = freshLease();
    // Long enough that a loaded machine causes no handover before the one this test makes.
    const unhurried: LeaseTiming = { leaseDurationSeconds: 4, renewDeadlineMs: 3000, retryPeriodMs: 100 };
    const candidates = ["replica-a", "replica-b", "replica-c"].map((id) => candidate(lease, id, unhurried));
    const first = await eventually(() => leaderOf(candidates), { what: "a leader" });
    const stored = await leases.get(lease);
    expect(stored).toMatchObject({
      holderIdentity: first.identity,
      leaseDurationSeconds: 4,
      leaseTransitions: 0,
    });
    expect(stored?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    // Renewals go on while it leads: the lease keeps changing and nobody else starts.
    const renewedTime = stored?.renewTime;
    await eventually(async () => ((await leases.get(lease))?.renewTime !== renewedTime ? true : undefined), {
      what: "a renewal",
    });
    expect(leaderOf(candidates)).toBe(first);

    const stoppedAt = performance.now();
    await first.elector.stop();
    expect(first.stoppedAt).toHaveLength(1);
    const second = await eventually(() => leaderOf(candidates), { what: "the next leader" });
    expect(second).not.toBe(first);
    // Released, not left to run out: the next candidate takes it at its next try.
    expect((second.startedAt[0] ?? Infinity) - stoppedAt).toBeLessThan(unhurried.leaseDurationSeconds * 1000);
    expect(await leases.get(lease)).toMatchObject({ holderIdentity: second.identity, leaseTransitions: 1 });
  });

  it("takes over from a holder that stopped renewing (a crashed replica) once its lease ran out", async () => {
    const lease = freshLease();
    const crashed = new LeaseLock({ leases, name: lease, identity: "crashed", leaseDurationSeconds: 1 });
    expect((await crashed.tryAcquireOrRenew()).held).toBe(true);
    const acquiredAt = performance.now();

    const successor = candidate(lease, "successor");
    await eventually(() => (successor.elector.isLeader ? true : undefined), { what: "the takeover" });
    const handoverMs = (successor.startedAt[0] ?? 0) - acquiredAt;
    expect(handoverMs).toBeGreaterThanOrEqual(timing.leaseDurationSeconds * 1000);
    expect(handoverMs).toBeLessThan(
      timing.leaseDurationSeconds * 1000 + patient(4 * timing.retryPeriodMs + 500),
    );
    expect(await leases.get(lease)).toMatchObject({ holderIdentity: "successor", leaseTransitions: 1 });
    // The crashed holder, come back, finds it taken.
    expect(await crashed.tryAcquireOrRenew()).toMatchObject({
      held: false,
      lease: { holderIdentity: "successor" },
    });
  });

  it("gives a free lease to exactly one of several racing candidates", async () => {
    for (let round = 0; round < 3; round++) {
      const lease = freshLease();
      const locks = ["a", "b", "c", "d"].map(
        (identity) => new LeaseLock({ leases, name: lease, identity, leaseDurationSeconds: 1 }),
      );
      const outcomes = await Promise.all(locks.map((lock) => lock.tryAcquireOrRenew()));
      expect(outcomes.filter((outcome) => outcome.held)).toHaveLength(1);
    }
  });

  it("steps down within the renew deadline when the API is gone, so leaders never overlap", async () => {
    const lease = freshLease();
    const candidates = [candidate(lease, "replica-a"), candidate(lease, "replica-b")];
    const first = await eventually(() => leaderOf(candidates), { what: "a leader" });
    const cutAt = performance.now();
    cluster.emulator.faults.dropConnections({ forMs: 1500 });
    await eventually(() => (first.stoppedAt.length > 0 ? true : undefined), { what: "the step-down" });
    // Its last renewal was sent at most one retry period before the cut: it stops before anyone
    // else may start (a lease duration after that renewal).
    expect((first.stoppedAt[0] ?? 0) - cutAt).toBeLessThan(timing.leaseDurationSeconds * 1000);

    // Back after the outage: someone leads again, and at no moment did two lead.
    await eventually(() => leaderOf(candidates), { timeoutMs: 8000, what: "a leader after the outage" });
    const intervals = candidates.flatMap((each) =>
      each.startedAt.map((start, index) => ({ start, end: each.stoppedAt[index] ?? Infinity })),
    );
    intervals.sort((a, b) => a.start - b.start);
    for (let i = 1; i < intervals.length; i++) {
      expect(intervals[i]!.start).toBeGreaterThanOrEqual(intervals[i - 1]!.end);
    }
  });
});
