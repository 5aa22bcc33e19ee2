// What a claim of a warm VM must not take, over real sockets: a VM the cluster is already deleting
// (it keeps its labels while it terminates, and may still be patched, as upstream), and a change an
// admission webhook refuses, which must not pass silently as a lost race.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Me } from "../../common/api.ts";
import { eventually } from "../../common/testing/patience.ts";
import { jsonRequest } from "../../emulator/testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { createClusterClient } from "../kube/client.ts";
import { KubeRequestCounter } from "../kube/request-counter.ts";
import type { VirtualMachine } from "../kube/types.ts";
import { labelKeys, sessionsSelector } from "../sessions/labels.ts";
import type { SessionSnapshot } from "../sessions/source.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { cloudInitSecretName } from "../sessions/vm-manifest.ts";
import { startTestBff, testNamespace, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { scheduleReadyClass } from "./testing/warm-class.ts";
import { WarmClaims } from "./warm-claims.ts";
import { WarmPatchRefusals } from "./warm-patch-refusals.ts";

const lab = aLab({ id: "refusal-lab", title: "Refusal lab" });
const metricsToken = "a-metrics-token-for-claim-refusals";
const vmsPath = `/apis/kubevirt.io/v1/namespaces/${testNamespace}/virtualmachines`;
const policy = {
  name: "vm-policy.example.com",
  resource: "virtualmachines",
  operations: ["UPDATE" as const],
  message: "VirtualMachines in this namespace are managed by GitOps",
};

let emulator: TestEmulator;
let bff: TestBff;
let ivan: TestBrowser;

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({ labs: [lab], emulator, metricsToken, warmPool: { intervalMs: 100 } });
  ivan = await bff.signIn("ivan");
  await scheduleReadyClass(ivan, {
    labId: lab.id,
    startsAt: new Date(Date.now() + 60_000),
    endsAt: new Date(Date.now() + 3_600_000),
    expected: 2,
  });
}, 90_000);

afterAll(async () => {
  emulator?.emulator.faults.reset();
  await bff?.close();
  await emulator?.close();
});

async function readyWarmVms(): Promise<VirtualMachine[]> {
  const answer = await jsonRequest(emulator.emulator, "GET", `${vmsPath}?labelSelector=${labelKeys.warmFor}`);
  return (answer.json as { items: VirtualMachine[] }).items.filter((vm) => !vm.metadata.deletionTimestamp);
}

function jsonPatchVm(name: string, operations: unknown) {
  return jsonRequest(emulator.emulator, "PATCH", `${vmsPath}/${name}`, operations, {
    contentType: "application/json-patch+json",
  });
}

describe("a claim", () => {
  it("passes over a warm VM the cluster is deleting, though the launch read it before the delete", async () => {
    const [vm] = await readyWarmVms();
    const name = vm!.metadata.name!;
    const classId = vm!.metadata.labels![labelKeys.warmFor]!;
    // What the launch read a moment before the delete: its view lags the cluster, as every cache may.
    const before: SessionSnapshot = {
      sessions: [],
      stale: false,
      objects: new Map(),
      warm: [{ name, labId: lab.id, classId, vm: vm!, vmi: { status: { phase: "Running" } } as never }],
    };
    // A finalizer of someone else's holds the VM while it terminates, as a slow VMI shutdown does.
    const hold = [{ op: "add", path: "/metadata/finalizers", value: ["example.com/hold"] }];
    expect((await jsonPatchVm(name, hold)).status).toBe(200);
    expect((await jsonRequest(emulator.emulator, "DELETE", `${vmsPath}/${name}`)).status).toBe(200);

    const refusals = new WarmPatchRefusals({
      counter: { inc: () => undefined } as never,
      now: () => new Date(),
      log: { warn: () => undefined },
    });
    const claims = new WarmClaims({
      cluster: createClusterClient(emulator.bffKubeConfig(), {
        namespace: testNamespace,
        labelSelector: sessionsSelector,
        counter: new KubeRequestCounter(),
      }),
      source: { snapshot: async () => before, waitForVm: async () => undefined } as never,
      agents: {
        claim: async () => {
          throw new Error("a VM being deleted must never reach its agent");
        },
      },
      sessionUserData: () => "#cloud-config\n",
      refusals,
      now: () => new Date(),
      log: { warn: () => undefined },
    });
    const alice: Me = { username: "alice", role: "student", sections: ["a"] };
    expect(await claims.claim(alice, lab, new Date(Date.now() + 3_600_000))).toBeUndefined();

    // Nobody's session: still the class's, its user data untouched, and no refusal to report.
    const after = (await jsonRequest(emulator.emulator, "GET", `${vmsPath}/${name}`)).json as VirtualMachine;
    expect(after.metadata.deletionTimestamp).toBeDefined();
    expect(after.metadata.labels?.[labelKeys.warmFor]).toBe(classId);
    expect(after.metadata.labels?.[labelKeys.ownerId]).toBeUndefined();
    const secret = `/api/v1/namespaces/${testNamespace}/secrets/${cloudInitSecretName(name)}`;
    expect((await jsonRequest(emulator.emulator, "GET", secret)).status).toBe(200);
    expect(refusals.summary().count).toBe(0);
    const release = [{ op: "remove", path: "/metadata/finalizers" }];
    await jsonPatchVm(name, release);
  });

  it("refused by an admission webhook starts the launch cold, and says so in /metrics and the doctor", async () => {
    await eventually(readyWarmVms, (vms) => vms.length >= 1, { timeoutMs: 60_000, what: "a ready warm VM" });
    emulator.emulator.faults.refuseWrites(policy);
    try {
      const alice = await bff.signIn("alice");
      const launched = await alice.post("/api/sessions", { labId: lab.id });
      expect(launched.status).toBe(201);
      expect(launched.body.start).toBe("cold");

      const metrics = await fetch(`${bff.url}/metrics`, {
        headers: { authorization: `Bearer ${metricsToken}` },
      });
      expect(await metrics.text()).toMatch(/^lab_console_warm_patch_refusals_total\{patch="claim"\} [1-9]/m);
      const doctor = await ivan.get("/api/doctor");
      const check = doctor.body.checks.find((each: { id: string }) => each.id === "warm-patches");
      expect(check).toMatchObject({ status: "fail", title: "Warm VMs can be claimed" });
      expect(check.details[0]).toContain(
        `admission webhook "vm-policy.example.com" denied the request: VirtualMachines in this namespace are managed by GitOps`,
      );
    } finally {
      emulator.emulator.faults.reset();
    }
  }, 60_000);
});
