// Console leases between replicas over the emulator, as the BFF's service account: the first claim
// wins and the others are sent to it, a release hands over at once, a dead replica's consoles are
// taken over once its own lease ran out (and swept later), and a replica that loses the API lets go.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { patienceFactor, patient } from "../../common/testing/patience.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { createLeaseClient, type LeaseClient } from "../kube/leases.ts";
import { consoleLeaseName, type ConsoleHome } from "./console-ownership.ts";
import { createLeaseCoordination, type Coordination } from "./coordination.ts";
import { endpointAnnotation, labelsFor } from "./lease-labels.ts";
import { replicaLeaseName } from "./membership.ts";
import type { LeaseTiming } from "./timing.ts";

// Short leases keep the takeover tests quick; on a busy machine a renewal takes longer, and a lease
// that lapses for that reason would say "cannot reach the cluster" where the test means otherwise.
const timing: LeaseTiming = {
  leaseDurationSeconds: Math.ceil(patienceFactor()),
  renewDeadlineMs: patient(600),
  retryPeriodMs: 100,
};
const quiet = { info: () => undefined, warn: () => undefined };

let cluster: TestEmulator;
let leases: LeaseClient;
let a: Coordination;
let b: Coordination;

function where(coordination: Coordination, sessionId: string): Promise<ConsoleHome> {
  return coordination.consoles.claim(sessionId, (home) => home);
}

beforeAll(async () => {
  cluster = await startTestEmulator({ deployRbac: true });
  leases = createLeaseClient(cluster.bffKubeConfig(), { namespace: "lab-console" });
  a = createLeaseCoordination({ leases, identity: "replica-a", timing, log: quiet });
  b = createLeaseCoordination({ leases, identity: "replica-b", timing, log: quiet });
  a.announce("http://127.0.0.1:1001");
  b.announce("http://127.0.0.1:1002");
});

afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
  await cluster.close();
});

describe("console ownership", () => {
  it("gives a console to the first replica that claims it and sends the others there", async () => {
    expect(await where(a, "lab-one")).toEqual({ kind: "here" });
    expect(await where(b, "lab-one")).toEqual({
      kind: "peer",
      peer: { identity: "replica-a", endpoint: "http://127.0.0.1:1001" },
    });
    expect(await where(a, "lab-one")).toEqual({ kind: "here" });
    expect(await leases.get(consoleLeaseName("lab-one"))).toMatchObject({
      holderIdentity: "replica-a",
      labels: { "labconsole.dev/lease": "console", "labconsole.dev/session": "lab-one" },
      annotations: { [endpointAnnotation]: "http://127.0.0.1:1001" },
    });
  });

  it("keeps a console reopened before its release ran, and hands a released one over at once", async () => {
    expect(await where(a, "lab-two")).toEqual({ kind: "here" });
    await a.consoles.release("lab-two", () => true);
    expect((await leases.get(consoleLeaseName("lab-two")))?.holderIdentity).toBe("replica-a");
    await a.consoles.release("lab-two", () => false);
    expect(await leases.get(consoleLeaseName("lab-two"))).toBeUndefined();
    expect(await where(b, "lab-two")).toEqual({ kind: "here" });
  });

  it("lets no release of a session run while a claim of it is being used", async () => {
    const order: string[] = [];
    let finishUse: () => void = () => undefined;
    const claim = a.consoles.claim("lab-three", async () => {
      order.push("use begins");
      await new Promise<void>((resolve) => (finishUse = resolve));
      order.push("use ends");
    });
    await eventually(() => (order.length === 1 ? true : undefined), { what: "the claim in use" });
    const release = a.consoles.release("lab-three", () => false).then(() => order.push("released"));
    await new Promise((resolve) => setImmediate(resolve));
    finishUse();
    await Promise.all([claim, release]);
    expect(order).toEqual(["use begins", "use ends", "released"]);
  });

  it("takes over a dead replica's console once its replica lease ran out, and sweeps what it left", async () => {
    // What a replica killed outright leaves: its own lease and its consoles' leases, never renewed.
    const now = new Date();
    const lease = (name: string, kind: "replica" | "console") => ({
      name,
      holderIdentity: "replica-dead",
      // Its own duration decides when others may take over: long enough for a loaded machine.
      leaseDurationSeconds: 2,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
      labels: labelsFor(kind),
      annotations: { [endpointAnnotation]: "http://127.0.0.1:1003" },
    });
    const createdAt = performance.now();
    await leases.create(lease(replicaLeaseName("replica-dead"), "replica"));
    await leases.create(lease(consoleLeaseName("lab-four"), "console"));
    await leases.create(lease(consoleLeaseName("lab-five"), "console"));
    // First seen just now, so alive for a lease duration as far as this replica can tell.
    expect(await where(b, "lab-four")).toMatchObject({ kind: "peer", peer: { identity: "replica-dead" } });
    await eventually(async () => ((await where(b, "lab-four")).kind === "here" ? true : undefined), {
      what: "the takeover",
    });
    expect(performance.now() - createdAt).toBeGreaterThanOrEqual(2000);
    expect(await leases.get(consoleLeaseName("lab-four"))).toMatchObject({
      holderIdentity: "replica-b",
      leaseTransitions: 1,
    });
    // Nobody opened lab-five again: its lease and the dead replica's go in a later sweep.
    await eventually(
      async () =>
        (await leases.get(consoleLeaseName("lab-five"))) === undefined &&
        (await leases.get(replicaLeaseName("replica-dead"))) === undefined
          ? true
          : undefined,
      // A sweep runs every four lease durations.
      { timeoutMs: patient(8000), intervalMs: 100, what: "the sweep" },
    );
  });

  it("makes a replica that cannot renew its own lease give its consoles up", async () => {
    let lostAt: number | undefined;
    a.consoles.onLost(() => {
      lostAt ??= performance.now();
    });
    const cutAt = performance.now();
    // Longer than the renew deadline, whatever it is on this machine.
    cluster.emulator.faults.dropConnections({ forMs: 2 * timing.renewDeadlineMs });
    await eventually(() => lostAt, { what: "the loss" });
    // Before any other replica could take its consoles (a lease duration after the last renewal).
    expect((lostAt ?? Infinity) - cutAt).toBeLessThan(timing.leaseDurationSeconds * 1000);
    // Back once the API is: it announces itself again and claims as before.
    await eventually(async () => ((await where(a, "lab-six")).kind === "here" ? true : undefined), {
      timeoutMs: patient(5000),
      what: "claims to work again",
    });
  });
});
