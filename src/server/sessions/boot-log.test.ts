// The boot log over real sockets: the guest prints while nobody is attached, the emulator keeps its
// serial output as the launcher pod's guest-console-log, and the BFF (deploy/base's RBAC: list pods,
// get pods/log) serves it to the session's owner and staff. While the sidecar waits to start, the
// cluster's 400 means "nothing printed yet", not a rejected VM.
import { ApiException, CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonRequest, rawRequest } from "../../emulator/testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, testNamespace, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { adminCluster } from "../system-tests/testing/cluster-sessions.ts";
import { buildSessionObjects, newSessionId, ownedByVm } from "./vm-manifest.ts";
import { aLab } from "./testing/fixtures.ts";

const marker = "boot-marker-4711";
const bootLab = aLab({
  id: "lab-boot",
  title: "Boot log",
  vm: {
    cpu: 1,
    memory: "1Gi",
    image: "quay.io/containerdisks/fedora:41",
    nested: false,
    // Split so the command line itself, echoed nowhere, cannot be mistaken for its output.
    cloudInit: `#cloud-config\nruncmd:\n  - echo boot-marker-''4711\n`,
  },
});
let emulator: TestEmulator;
let bff: TestBff;

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({ labs: [bootLab], emulator });
});

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

describe("the boot log", () => {
  let alice: TestBrowser;
  let sessionId: string;

  beforeAll(async () => {
    alice = await bff.signIn("alice");
    const created = await alice.post("/api/sessions", { labId: "lab-boot" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    sessionId = created.body.id as string;
  });

  it("shows what the guest printed at boot though nobody ever attached", async () => {
    const answer = await eventually(
      () => alice.get(`/api/sessions/${sessionId}/boot-log`),
      // runcmd prints the marker before cloud-init says it finished.
      (got) => got.status !== 200 || (got.body?.lines as string[]).includes("cloud-init: finished"),
      { what: "the end of cloud-init in the boot log", timeoutMs: 20_000 },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const lines = answer.body?.lines as string[];
    expect(answer.body?.logging).toBe("on");
    expect(lines).toContain(marker);
    expect(lines).toContain("cloud-init: finished");
  });

  it("is for the owner and staff only", async () => {
    const bob = await bff.signIn("bob");
    expect((await bob.get(`/api/sessions/${sessionId}/boot-log`)).status).toBe(404);
    const tara = await bff.signIn("tara");
    const staffView = await tara.get(`/api/sessions/${sessionId}/boot-log`);
    expect(staffView.status).toBe(200);
    expect(staffView.body?.lines).toContain(marker);
  });

  it("refuses another container's name as the API server does", async () => {
    const core = emulator.kubeConfig.makeApiClient(CoreV1Api);
    const { items } = await core.listNamespacedPod({ namespace: testNamespace });
    const podName = items[0]?.metadata?.name ?? "";
    const tail = await core.readNamespacedPodLog({
      namespace: testNamespace,
      name: podName,
      container: "guest-console-log",
      tailLines: 1,
    });
    expect(tail).toBe("cloud-init: finished\n");
    const refused = await core
      .readNamespacedPodLog({ namespace: testNamespace, name: podName, container: "nope" })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiException);
    expect((refused as ApiException<string>).code).toBe(400);
    expect(String((refused as ApiException<string>).body)).toContain(
      `container nope is not valid for pod ${podName}`,
    );
  });
});

describe("a VM whose serial console log is off", () => {
  it("answers logging off with no lines, not an error", async () => {
    const carol = await bff.signIn("carol");
    const created = await carol.post("/api/sessions", { labId: "lab-boot" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    await eventually(
      () => carol.get(`/api/sessions/${id}`),
      (got) => got.body?.status === "running",
      { what: "carol's session to run" },
    );
    // As an administrator would: turn the VM's logging off; the restarted VMI's pod has no sidecar.
    const vmPath = `/apis/kubevirt.io/v1/namespaces/${testNamespace}/virtualmachines/${id}`;
    const patched = await rawRequest(emulator.emulator, "PATCH", vmPath, {
      contentType: "application/merge-patch+json",
      body: JSON.stringify({
        spec: { template: { spec: { domain: { devices: { logSerialConsole: false } } } } },
      }),
    });
    expect(patched.status, patched.text).toBe(200);
    const restarted = await jsonRequest(
      emulator.emulator,
      "PUT",
      `/apis/subresources.kubevirt.io/v1/namespaces/${testNamespace}/virtualmachines/${id}/restart`,
      {},
    );
    expect(restarted.status, restarted.text).toBe(202);

    const answer = await eventually(
      () => carol.get(`/api/sessions/${id}/boot-log`),
      (got) => got.status !== 200 || got.body?.logging === "off",
      { what: "the boot log to say logging is off", timeoutMs: 20_000 },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual({ lines: [], logging: "off" });
  });
});

describe("a VM whose launcher pod is still starting", () => {
  it("answers no lines while the launcher pod has no node, where the cluster sends no log at all", async () => {
    // No node has room for it: the pod stays unbound, and the pod log API answers 204 No Content.
    const cluster = adminCluster(emulator);
    const sessionId = newSessionId(bootLab.id);
    const { virtualMachine, userDataSecret } = buildSessionObjects({
      sessionId,
      lab: { ...bootLab, vm: { ...bootLab.vm, memory: "4000Gi" } },
      owner: "bob",
      namespace: cluster.namespace,
      expiresAt: new Date(Date.now() + 3600_000),
    });
    const created = await cluster.createVirtualMachine(virtualMachine);
    await cluster.createSecret(ownedByVm(userDataSecret, created));
    const bob = await bff.signIn("bob");
    await eventually(
      () => bob.get(`/api/sessions/${sessionId}`),
      (got) => got.body?.phase === "Scheduling" && got.body?.status === "failed",
      { what: "the BFF to see the VMI unschedulable" },
    );
    const core = emulator.kubeConfig.makeApiClient(CoreV1Api);
    const { items } = await core.listNamespacedPod({
      namespace: testNamespace,
      labelSelector: `vm.kubevirt.io/name=${sessionId}`,
    });
    expect(items.map((item) => item.spec?.nodeName)).toEqual([undefined]);

    const answer = await bob.get(`/api/sessions/${sessionId}/boot-log`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual({ lines: [], logging: "on" });
  });

  it("answers no lines yet while the cluster says the sidecar is waiting to start, then the boot", async () => {
    // Launched as another replica would, with the cloud-init Secret held back: bound to a node, the
    // kubelet cannot mount it, so the pod's containers wait (on a cluster: image pulls, volume mounts).
    const cluster = adminCluster(emulator);
    const sessionId = newSessionId(bootLab.id);
    const { virtualMachine, userDataSecret } = buildSessionObjects({
      sessionId,
      lab: bootLab,
      owner: "bob",
      namespace: cluster.namespace,
      expiresAt: new Date(Date.now() + 3600_000),
    });
    const created = await cluster.createVirtualMachine(virtualMachine);
    const bob = await bff.signIn("bob");
    // The BFF knows the VMI (so the boot log route asks the cluster), and the pod is on a node.
    await eventually(
      () => bob.get(`/api/sessions/${sessionId}`),
      (got) => got.body?.phase === "Scheduling",
      { what: "the BFF to see the VMI scheduling" },
    );
    const core = emulator.kubeConfig.makeApiClient(CoreV1Api);
    const pod: V1Pod | undefined = (
      await eventually(
        () =>
          core.listNamespacedPod({
            namespace: testNamespace,
            labelSelector: `vm.kubevirt.io/name=${sessionId}`,
          }),
        (list) => list.items.some((item) => item.spec?.nodeName !== undefined),
        { what: "the launcher pod to be bound" },
      )
    ).items[0];
    const podName = pod?.metadata?.name ?? "";
    const waiting = await core
      .readNamespacedPodLog({ namespace: testNamespace, name: podName, container: "guest-console-log" })
      .catch((error: unknown) => error);
    expect((waiting as ApiException<string>).code).toBe(400);
    expect(String((waiting as ApiException<string>).body)).toContain(
      `container \\"guest-console-log\\" in pod \\"${podName}\\" is waiting to start`,
    );

    const early = await bob.get(`/api/sessions/${sessionId}/boot-log`);
    expect(early.status, JSON.stringify(early.body)).toBe(200);
    expect(early.body).toEqual({ lines: [], logging: "on" });

    await cluster.createSecret(ownedByVm(userDataSecret, created));
    const booted = await eventually(
      () => bob.get(`/api/sessions/${sessionId}/boot-log`),
      (got) => got.status !== 200 || (got.body?.lines as string[]).includes("cloud-init: finished"),
      { what: "the boot in the log once the pod runs", timeoutMs: 20_000 },
    );
    expect(booted.status).toBe(200);
    expect(booted.body?.lines).toContain(marker);
  });
});
