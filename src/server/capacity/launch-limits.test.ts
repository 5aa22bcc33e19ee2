// Launch limits and capacity end to end, on a cluster with one small KVM node (4 CPU, 10Gi) and one big
// node without KVM: each refusal names its limit, and the capacity estimate agrees with what the
// emulator's scheduler (KubeVirt's launcher-pod formula) actually places.
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { buildSessionObjects } from "../sessions/vm-manifest.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, testNamespace, type TestBff, type TestBrowser } from "../testing/test-bff.ts";

const big = aLab({ id: "big", title: "Big lab", vm: { ...aLab().vm, cpu: 2, memory: "4Gi" } });
const small = aLab({ id: "small", title: "Small lab", vm: { ...aLab().vm, cpu: 1, memory: "2Gi" } });
const tiny = aLab({ id: "tiny", title: "Tiny lab", vm: { ...aLab().vm, cpu: 1, memory: "512Mi" } });
/**
 * What KubeVirt v1.9.0's formula (and so the emulator) gives each launcher pod, console-log sidecar
 * included: 4Gi + 297,795,585 B (about 284Mi), 2Gi + 272Mi, 512Mi + 269Mi.
 */
const bigPod = { cpuMillis: 205, memoryBytes: 4_294_967_296 + 297_795_585 + 35_000_000 };
const smallPod = { cpuMillis: 105, memoryBytes: 2_147_483_648 + 285_212_672 + 35_000_000 };
const tinyPod = { cpuMillis: 105, memoryBytes: 536_870_912 + 282_066_944 + 35_000_000 };

let emulator: TestEmulator;
let bff: TestBff;
const browsers = new Map<string, TestBrowser>();

beforeAll(async () => {
  emulator = await startTestEmulator({
    deployRbac: true,
    cluster: {
      nodes: [
        { name: "node01", cpu: "4", memory: "10Gi" },
        { name: "node02", cpu: "64", memory: "256Gi", kvm: false },
      ],
    },
  });
  bff = await startTestBff({
    labs: [big, small, tiny],
    emulator,
    quotas: { perStudent: 1, perLab: 2, total: 4 },
  });
  for (const name of ["alice", "bob", "tara", "ivan"]) browsers.set(name, await bff.signIn(name));
});

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

function as(name: string): TestBrowser {
  const browser = browsers.get(name);
  if (!browser) throw new Error(`${name} is not signed in`);
  return browser;
}

async function launch(name: string, labId: string) {
  return as(name).post("/api/sessions", { labId });
}

async function launched(name: string, labId: string): Promise<string> {
  const answer = await launch(name, labId);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.id as string;
}

describe("capacity and launch limits", () => {
  it("estimates how many sessions of each lab fit on the nodes with KVM", async () => {
    expect((await as("alice").get("/api/capacity")).status).toBe(403);
    const report = await as("tara").get("/api/capacity");
    expect(report.status).toBe(200);
    expect(report.body.cpuAllocationRatio).toBe(10);
    expect(report.body.nodes).toEqual([
      {
        name: "node01",
        allocatable: { cpuMillis: 4000, memoryBytes: 10 * 2 ** 30 },
        used: { cpuMillis: 0, memoryBytes: 0 },
      },
    ]);
    expect(report.body.labs).toEqual([
      { labId: "big", request: bigPod, fits: 2 },
      { labId: "small", request: smallPod, fits: 4 },
      { labId: "tiny", request: tinyPod, fits: 12 },
    ]);
  });

  it("refuses each limit in plain words, and room the node does not have, before anything reaches the cluster", async () => {
    await launched("alice", "small");
    const perStudent = await launch("alice", "big");
    expect(perStudent.status).toBe(429);
    expect(perStudent.body.error.code).toBe("quota");
    expect(perStudent.body.error.message).toMatch(
      /^You already have an active session \("Small lab"\), and students may have 1 at a time\. End it to start another; otherwise it ends in (59 min|1 h)\.$/,
    );

    await launched("bob", "small");
    const perLab = await launch("tara", "small");
    expect(perLab.status).toBe(429);
    expect(perLab.body.error.message).toMatch(
      /^"Small lab" is full: it allows 2 active sessions at once\. Try again when one ends; the next one ends in (59 min|1 h)\.$/,
    );

    const tarasBig = await launched("tara", "big");
    const requestsBefore = bff.kubeRequests.total("create");
    const noRoom = await launch("ivan", "big");
    expect(noRoom.status).toBe(503);
    expect(noRoom.body.error.code).toBe("capacity");
    expect(noRoom.body.error.message).toMatch(
      /^There is no room on the cluster for another "Big lab" VM right now: it needs 0\.205 CPU and 4\.3 GiB of memory on one node, and the most any node has free is 3\.585 CPU and 1\.1 GiB of memory\. Room frees up as sessions end; the next one ends in (59 min|1 h)\.$/,
    );
    expect(bff.kubeRequests.total("create")).toBe(requestsBefore);

    // What the estimate let through, the emulator's scheduler placed: every session runs.
    for (const name of ["alice", "bob", "tara"]) {
      await eventually(
        () => as(name).get(`/api/sessions?owner=${name}`),
        (answer) => answer.body.items.length === 1 && answer.body.items[0].status === "running",
        { what: `${name}'s session to run` },
      );
    }
    const capacity = await as("tara").get("/api/capacity");
    expect(capacity.body.labs.map((lab: { fits: number }) => lab.fits)).toEqual([0, 0, 1]);
    expect(capacity.body.nodes[0].used).toEqual({
      cpuMillis: bigPod.cpuMillis + 2 * smallPod.cpuMillis,
      memoryBytes: bigPod.memoryBytes + 2 * smallPod.memoryBytes,
    });

    // And what it refused, the scheduler refuses too: a VM created behind the console's back stays unscheduled.
    const bypass = await createBehindTheConsole("carol");
    const failed = await eventually(
      () => as("tara").get(`/api/sessions/${bypass}`),
      (answer) => answer.body?.status === "failed",
      { what: "the extra VM to be unschedulable" },
    );
    expect(failed.body.message).toBe("No node has room for this VM (2 vCPU, 4Gi) right now");

    // Four active sessions now (a failed one keeps its place until it is ended): the overall limit.
    const total = await launch("ivan", "tiny");
    expect(total.status).toBe(429);
    expect(total.body.error.message).toMatch(/^Lab Console is at its limit of 4 active sessions at once\./);

    // Ending one frees its place and its room.
    expect((await as("tara").delete(`/api/sessions/${tarasBig}`)).status).toBe(202);
    await eventually(
      () => as("tara").get(`/api/sessions/${bypass}`),
      (answer) => answer.body?.status === "running",
      { what: "the waiting VM to get the room" },
    );
  });
});

/** A session VM made with the admin's credentials, as if someone bypassed the console. */
async function createBehindTheConsole(owner: string): Promise<string> {
  const sessionId = "big-bypass01";
  const { virtualMachine, userDataSecret } = buildSessionObjects({
    sessionId,
    lab: big,
    owner,
    namespace: testNamespace,
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  await emulator.kubeConfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: "kubevirt.io",
    version: "v1",
    namespace: testNamespace,
    plural: "virtualmachines",
    body: virtualMachine,
  });
  await emulator.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespacedSecret({ namespace: testNamespace, body: userDataSecret as never });
  return sessionId;
}
