// virt-api's start, stop and restart while another stop/start is still queued, over the wire: a
// second restart or start is virt-api's 500 InternalError (not a 409), a stop replaces what is queued,
// and the other refusals carry KubeVirt v1.9.0's words (pkg/virt-api/rest/lifecycle.go).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../cluster/objects.ts";
import type { GuestEvents, GuestRuntime } from "../guests/guest-runtime.ts";
import { vmManifest } from "../testing/manifests.ts";
import { jsonRequest, rawRequest } from "../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../testing/start.ts";

const vmsPath = "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachines";
const vmisPath = "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachineinstances";
const subresources = "/apis/subresources.kubevirt.io/v1/namespaces/lab-sessions/virtualmachines";
/** Someone else's finalizer on a VMI: it stays, deleted and final, until that someone lets go. */
const foreignFinalizer = "example.com/keep";

interface Vm extends KubeObject {
  status?: { printableStatus?: string; stateChangeRequests?: { action: string; uid?: string }[] };
}
interface Vmi extends KubeObject {
  spec: { terminationGracePeriodSeconds?: number };
  status?: { phase?: string };
}

/** Guests whose shutdown the test releases by hand, and which it can make exit. */
class HeldShutdowns implements GuestRuntime {
  private readonly events = new Map<string, GuestEvents>();
  private readonly shutdowns = new Map<string, () => void>();

  async start(vmi: KubeObject, events: GuestEvents): Promise<void> {
    this.events.set(vmi.metadata.name, events);
  }

  stop(vmi: KubeObject): Promise<void> {
    return new Promise((resolve) => this.shutdowns.set(vmi.metadata.name, resolve));
  }

  find(): undefined {
    return undefined;
  }

  async crash(): Promise<boolean> {
    return false;
  }

  async close(): Promise<void> {
    for (const release of this.shutdowns.values()) release();
  }

  /** Lets a held shutdown finish; false when none is held. */
  release(name: string): boolean {
    const release = this.shutdowns.get(name);
    this.shutdowns.delete(name);
    release?.();
    return release !== undefined;
  }

  exit(name: string, phase: "Succeeded" | "Failed"): void {
    this.events.get(name)?.exited(phase, phase === "Failed" ? "guest crashed" : "guest powered off");
  }
}

const guests = new HeldShutdowns();
let cluster: TestEmulator;

beforeAll(async () => {
  cluster = await startTestEmulator({ guests });
});

afterAll(async () => {
  await cluster?.close();
});

const get = async <T>(path: string): Promise<T | undefined> => {
  const response = await jsonRequest(cluster.emulator, "GET", path);
  return response.status === 200 ? (response.json as T) : undefined;
};
const until = <T>(path: string, accept: (object: T) => boolean, what: string): Promise<T> =>
  eventually(
    async () => {
      const object = await get<T>(path);
      return object !== undefined && accept(object) ? object : undefined;
    },
    { what },
  );
const action = (name: string, verb: string, body?: unknown) =>
  jsonRequest(cluster.emulator, "PUT", `${subresources}/${name}/${verb}`, body);

async function runningVm(name: string, runStrategy: string, gracePeriod?: number): Promise<Vmi> {
  const manifest = vmManifest(name, { runStrategy }) as {
    spec: { template: { spec: Record<string, unknown> } };
  };
  if (gracePeriod !== undefined) manifest.spec.template.spec.terminationGracePeriodSeconds = gracePeriod;
  const created = await jsonRequest(cluster.emulator, "POST", vmsPath, manifest);
  expect(created.status, created.text).toBe(201);
  // A Manual VM waits to be started.
  if (runStrategy === "Manual") expect((await action(name, "start")).status).toBe(202);
  return until<Vmi>(`${vmisPath}/${name}`, (vmi) => vmi.status?.phase === "Running", `${name} to run`);
}

async function holdVmi(name: string): Promise<void> {
  const patched = await rawRequest(cluster.emulator, "PATCH", `${vmisPath}/${name}`, {
    contentType: "application/json-patch+json",
    body: JSON.stringify([{ op: "add", path: "/metadata/finalizers/-", value: foreignFinalizer }]),
  });
  expect(patched.status, patched.text).toBe(200);
}

const underway = "unable to complete request: stop/start already underway";
/** errors.NewInternalError as virt-api's writeError puts it on the wire. */
const underwayStatus = {
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: `Internal error occurred: ${underway}`,
  reason: "InternalError",
  details: { causes: [{ message: underway }] },
  code: 500,
};
const conflictMessage = (name: string, why: string) =>
  `Operation cannot be fulfilled on virtualmachine.kubevirt.io "${name}": ${why}`;

describe("a stop/start already underway", () => {
  it("makes a second restart virt-api's 500, and lets a stop replace the queued restart", async () => {
    const first = await runningVm("busy-vm", "Manual");
    expect((await action("busy-vm", "restart")).status).toBe(202);
    // The old VMI is shutting down (held here), so the restart's Stop and Start are still queued.
    const queued = await until<Vm>(
      `${vmsPath}/busy-vm`,
      (vm) => vm.status?.stateChangeRequests?.length === 2,
      "the restart's requests",
    );
    expect(queued.status?.stateChangeRequests).toEqual([
      { action: "Stop", uid: first.metadata.uid },
      { action: "Start" },
    ]);
    await until<Vmi>(
      `${vmisPath}/busy-vm`,
      (vmi) => vmi.metadata.deletionTimestamp !== undefined,
      "the stop",
    );

    const again = await action("busy-vm", "restart");
    expect(again.status).toBe(500);
    expect(again.json).toEqual(underwayStatus);
    // A force restart shortens the VMI's grace period before it is refused, and keeps it so.
    expect((await action("busy-vm", "restart", { gracePeriodSeconds: 0 })).json).toEqual(underwayStatus);
    expect((await get<Vmi>(`${vmisPath}/busy-vm`))?.spec.terminationGracePeriodSeconds).toBe(1);

    // A stop never waits its turn: it replaces the queue, so the VM stays down.
    expect((await action("busy-vm", "stop")).status).toBe(202);
    expect((await get<Vm>(`${vmsPath}/busy-vm`))?.status?.stateChangeRequests).toEqual([
      { action: "Stop", uid: first.metadata.uid },
    ]);
    expect(guests.release("busy-vm")).toBe(true);
    await eventually(async () => ((await get(`${vmisPath}/busy-vm`)) === undefined ? true : undefined), {
      what: "the VMI to go",
    });
    const stopped = await until<Vm>(
      `${vmsPath}/busy-vm`,
      (vm) => vm.status?.printableStatus === "Stopped",
      "the VM to be stopped",
    );
    expect(stopped.status?.stateChangeRequests).toBeUndefined();
  });

  it("makes a start virt-api's 500 too, for a Manual VM whose restart is queued", async () => {
    await runningVm("busy-start-vm", "Manual");
    guests.exit("busy-start-vm", "Succeeded");
    await until<Vmi>(`${vmisPath}/busy-start-vm`, (vmi) => vmi.status?.phase === "Succeeded", "a final VMI");
    await holdVmi("busy-start-vm");
    expect((await action("busy-start-vm", "start")).status).toBe(202);
    await until<Vmi>(
      `${vmisPath}/busy-start-vm`,
      (vmi) => vmi.metadata.deletionTimestamp !== undefined,
      "the old VMI to be deleted",
    );
    const again = await action("busy-start-vm", "start");
    expect(again.status).toBe(500);
    expect(again.json).toEqual(underwayStatus);
  });
});

describe("virt-api's other refusals", () => {
  it("refuses to start a RerunOnFailure VM from a failed VMI", async () => {
    await runningVm("rerun-failed-vm", "RerunOnFailure");
    await holdVmi("rerun-failed-vm");
    guests.exit("rerun-failed-vm", "Failed");
    await until<Vmi>(`${vmisPath}/rerun-failed-vm`, (vmi) => vmi.status?.phase === "Failed", "a failed VMI");
    const refused = await action("rerun-failed-vm", "start");
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({
      reason: "Conflict",
      message: conflictMessage(
        "rerun-failed-vm",
        "RerunOnFailure does not support starting VM from failed state",
      ),
    });
  });

  it("force-stops a Halted VM's shutting-down VMI only with a shorter grace period", async () => {
    await runningVm("halting-vm", "Always", 30);
    expect((await action("halting-vm", "stop")).status).toBe(202);
    await until<Vmi>(
      `${vmisPath}/halting-vm`,
      (vmi) => vmi.metadata.deletionTimestamp !== undefined,
      "the stop",
    );
    const shorterOnly = conflictMessage(
      "halting-vm",
      "Halted only supports manual stop requests with a shorter graceperiod",
    );
    const plain = await action("halting-vm", "stop");
    expect([plain.status, (plain.json as { message: string }).message]).toEqual([409, shorterOnly]);
    const longer = await action("halting-vm", "stop", { gracePeriod: 60 });
    expect([longer.status, (longer.json as { message: string }).message]).toEqual([409, shorterOnly]);
    // virt-api set the grace period before it refused, and leaves it so.
    expect((await get<Vmi>(`${vmisPath}/halting-vm`))?.spec.terminationGracePeriodSeconds).toBe(60);
    const vmiUid = (await get<Vmi>(`${vmisPath}/halting-vm`))?.metadata.uid;
    expect((await action("halting-vm", "stop", { gracePeriod: 5 })).status).toBe(202);
    expect((await get<Vmi>(`${vmisPath}/halting-vm`))?.spec.terminationGracePeriodSeconds).toBe(5);
    expect((await get<Vm>(`${vmsPath}/halting-vm`))?.status?.stateChangeRequests).toEqual([
      { action: "Stop", uid: vmiUid },
    ]);
    expect(guests.release("halting-vm")).toBe(true);
  });

  it("checks a restart's grace period before it looks for the VM", async () => {
    const refused = await action("no-such-vm", "restart", { gracePeriodSeconds: -1 });
    expect([refused.status, (refused.json as { message: string }).message]).toEqual([
      400,
      "gracePeriod has to be greater or equal to 0",
    ]);
  });
});
