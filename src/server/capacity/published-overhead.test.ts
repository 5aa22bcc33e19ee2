// The capacity estimate takes the memory overhead virt-controller publishes for each VMI
// (status.memory.memoryOverhead, VmiMemoryOverheadReport, on by default in KubeVirt v1.9.0) over its
// own formula: here the KubeVirt CR's additionalGuestMemoryOverheadRatio is lowered after a VM
// started, so the formula, which only knows today's settings, would count that VM's pod too small.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseQuantity } from "../../common/quantity.ts";
import type { KubeObject } from "../../emulator/cluster/objects.ts";
import { jsonRequest } from "../../emulator/testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, testNamespace, type TestBff } from "../testing/test-bff.ts";

const big = aLab({ id: "big", title: "Big lab", vm: { ...aLab().vm, cpu: 2, memory: "4Gi" } });
const kubeVirtPath = "/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts/kubevirt";
const sidecarMemory = 35_000_000;
/** KubeVirt v1.9.0's overhead for Lab Console's 2 vCPU / 4Gi VM, without a ratio. */
const formulaOverhead = 297_795_585;

let emulator: TestEmulator;
let bff: TestBff;
// The BFF re-reads the KubeVirt CR every 10 s; the test moves its clock on instead of waiting.
let clockOffsetMs = 0;

async function setOverheadRatio(ratio: string | undefined): Promise<void> {
  const current = (await jsonRequest(emulator.emulator, "GET", kubeVirtPath)).json as KubeObject & {
    spec: { configuration: Record<string, unknown> };
  };
  const { additionalGuestMemoryOverheadRatio: _old, ...configuration } = current.spec.configuration;
  const updated = {
    ...current,
    spec: {
      ...current.spec,
      configuration: {
        ...configuration,
        ...(ratio === undefined ? {} : { additionalGuestMemoryOverheadRatio: ratio }),
      },
    },
  };
  const answer = await jsonRequest(emulator.emulator, "PUT", kubeVirtPath, updated);
  expect(answer.status, answer.text).toBe(200);
}

beforeAll(async () => {
  emulator = await startTestEmulator({
    deployRbac: true,
    cluster: { nodes: [{ name: "node01", cpu: "8", memory: "16Gi" }] },
  });
  bff = await startTestBff({ labs: [big], emulator, now: () => new Date(Date.now() + clockOffsetMs) });
});

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

describe("the published memory overhead", () => {
  it("counts a running VM's pod as virt-controller sized it, and sizes the next VM of its lab no smaller", async () => {
    await setOverheadRatio("2");
    const alice = await bff.signIn("alice");
    const launch = await alice.post("/api/sessions", { labId: big.id });
    expect(launch.status, JSON.stringify(launch.body)).toBe(201);
    await eventually(
      () => alice.get(`/api/sessions/${launch.body.id}`),
      (answer) => answer.body?.status === "running",
      { what: "the session to run" },
    );

    // What the emulator's virt-controller gave the pod, and published, under the ratio 2.
    const pods = (
      await jsonRequest(
        emulator.emulator,
        "GET",
        `/api/v1/namespaces/${testNamespace}/pods?labelSelector=vm.kubevirt.io/name%3D${launch.body.id}`,
      )
    ).json as {
      items: (KubeObject & { spec: { containers: { resources: { requests: { memory: string } } }[] } })[];
    };
    const pod = pods.items[0];
    const computeMemory = parseQuantity(pod?.spec.containers[0]?.resources.requests.memory) ?? 0;
    // MultiplyMemory: ceil(297,795,585 / 1000) kB x (2 - 1) added.
    const publishedOverhead = formulaOverhead + 297_796_000;
    expect(pod?.metadata.annotations?.["kubevirt.io/memory-overhead-bytes"]).toBe(String(publishedOverhead));
    expect(computeMemory).toBe(4 * 2 ** 30 + publishedOverhead);

    // The ratio goes back to none; the formula now gives 284Mi, but the running pod still asks ~568Mi.
    await setOverheadRatio(undefined);
    clockOffsetMs += 11_000;
    const tara = await bff.signIn("tara");
    const report = await tara.get("/api/capacity");
    expect(report.status).toBe(200);
    expect(report.body.nodes[0].used.memoryBytes).toBe(computeMemory + sidecarMemory);
    // The next "big" VM: the newest published overhead of its lab, being larger than the formula's.
    expect(report.body.labs).toEqual([
      {
        labId: "big",
        request: { cpuMillis: 205, memoryBytes: computeMemory + sidecarMemory },
        fits: 2,
      },
    ]);
  });
});
