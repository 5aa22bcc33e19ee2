// The pod log API over the wire, as kubectl and client-node use it: a launcher pod carries the
// guest-console-log container only while serial console logging is on for its VMI, and asking for
// it otherwise is the API server's own 400. Before the pod has a node the answer is 204 No Content;
// on a node, the kubelet refuses with a 400 until the container has started.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { labSessionsNamespace as namespace } from "../seed.ts";
import { vmManifest } from "../testing/manifests.ts";
import { rawRequest } from "../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../testing/start.ts";

const execFileAsync = promisify(execFile);
let cluster: TestEmulator;
let core: CoreV1Api;
let customObjects: CustomObjectsApi;

beforeAll(async () => {
  cluster = await startTestEmulator();
  core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  customObjects = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  await cluster?.close();
});

/** Creates a VM with these serial console devices and returns its launcher pod once it runs. */
async function launcherPodOf(name: string, devices: Record<string, unknown> = {}): Promise<V1Pod> {
  const manifest = vmManifest(name) as {
    spec: { template: { spec: { domain: { devices: Record<string, unknown> } } } };
  };
  Object.assign(manifest.spec.template.spec.domain.devices, devices);
  await createVm(manifest);
  return podOf(name, (pod) => pod.status?.phase === "Running", `the launcher pod of ${name} to run`);
}

/** Native sidecars: init containers that keep running (restartPolicy Always). */
function sidecarsOf(pod: V1Pod): string[] {
  return (pod.spec?.initContainers ?? [])
    .filter((container) => container.restartPolicy === "Always")
    .map((container) => container.name);
}

async function refusal(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const { code, message } = await refusalStatus(call);
  return { code, message };
}

async function refusalStatus(
  call: Promise<unknown>,
): Promise<{ code: number; message: string; reason: string }> {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(ApiException);
  const { code, body } = error as ApiException<unknown>;
  const status = (typeof body === "string" ? JSON.parse(body) : body) as { message: string; reason: string };
  return { code, message: status.message, reason: status.reason };
}

async function createVm(manifest: Record<string, unknown>): Promise<void> {
  await customObjects.createNamespacedCustomObject({
    group: "kubevirt.io",
    version: "v1",
    namespace,
    plural: "virtualmachines",
    body: manifest,
  });
}

/** The launcher pod of a VM once it satisfies `ready`. */
function podOf(name: string, ready: (pod: V1Pod) => boolean, what: string): Promise<V1Pod> {
  return eventually(
    async () => {
      const { items } = await core.listNamespacedPod({
        namespace,
        labelSelector: `vm.kubevirt.io/name=${name}`,
      });
      return items.find(ready);
    },
    { what },
  );
}

const boundNotRunning = (pod: V1Pod) => pod.spec?.nodeName !== undefined && pod.status?.phase === "Pending";

async function setClusterSerialConsoleLog(disabled: boolean): Promise<void> {
  await customObjects.patchNamespacedCustomObject(
    {
      group: "kubevirt.io",
      version: "v1",
      namespace: "kubevirt",
      plural: "kubevirts",
      name: "kubevirt",
      body: {
        spec: { configuration: { virtualMachineOptions: disabled ? { disableSerialConsoleLog: {} } : null } },
      },
    },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
}

describe("a launcher pod's guest-console-log", () => {
  it("is there by default; an unnamed container must be named once disk helpers run beside compute", async () => {
    const pod = await launcherPodOf("log-default");
    const podName = pod.metadata?.name ?? "";
    expect(sidecarsOf(pod)).toEqual(["guest-console-log"]);
    expect(pod.status?.initContainerStatuses?.map((status) => status.name)).toContain("guest-console-log");
    // No guests in this emulator: the log is there and empty.
    expect(
      await core.readNamespacedPodLog({ namespace, name: podName, container: "guest-console-log" }),
    ).toBe("");
    // With ImageVolume off in KubeVirt (the default), a helper container serves the disk beside
    // compute, so the API server no longer picks the only regular container.
    const unnamed = await refusal(core.readNamespacedPodLog({ namespace, name: podName }));
    expect(unnamed.code).toBe(400);
    expect(unnamed.message).toMatch(
      new RegExp(
        `^a container name must be specified for pod ${podName}, choose one of: \\[guest-console-log .*compute volumecontainerdisk\\]$`,
      ),
    );
  });

  it("is gone with the cluster's disableSerialConsoleLog, and asking for it is a 400", async () => {
    await setClusterSerialConsoleLog(true);
    try {
      const pod = await launcherPodOf("log-off");
      const podName = pod.metadata?.name ?? "";
      expect(sidecarsOf(pod)).toEqual([]);
      expect(pod.status?.initContainerStatuses?.map((status) => status.name)).not.toContain(
        "guest-console-log",
      );
      // What the scheduler counted: compute (100m for 1 vCPU at ratio 10) and the disk's helper.
      expect(pod.spec?.containers.map((container) => container.resources?.requests?.cpu)).toEqual([
        "100m",
        "1m",
      ]);
      expect(
        await refusal(
          core.readNamespacedPodLog({ namespace, name: podName, container: "guest-console-log" }),
        ),
      ).toEqual({ code: 400, message: `container guest-console-log is not valid for pod ${podName}` });

      const kubectl = await execFileAsync(
        "kubectl",
        [
          "--kubeconfig",
          cluster.emulator.kubeconfigPath,
          "--cache-dir",
          join(cluster.dir, "kube-cache"),
          "logs",
          "-n",
          namespace,
          podName,
          "-c",
          "guest-console-log",
        ],
        { timeout: 20_000 },
      ).then(
        () => undefined,
        (failure: { stderr: string }) => failure.stderr,
      );
      // kubectl reads the pod first and refuses with the same words before asking for the log.
      expect(kubectl).toBe(`error: container guest-console-log is not valid for pod ${podName}\n`);

      // The VMI's own setting wins over the cluster's.
      expect(sidecarsOf(await launcherPodOf("log-forced", { logSerialConsole: true }))).toEqual([
        "guest-console-log",
      ]);
    } finally {
      await setClusterSerialConsoleLog(false);
    }
  });

  it("is off for a VMI that turns it off, and without a serial console even when asked for", async () => {
    expect(sidecarsOf(await launcherPodOf("log-declined", { logSerialConsole: false }))).toEqual([]);
    const noConsole = await launcherPodOf("log-no-console", {
      autoattachSerialConsole: false,
      logSerialConsole: true,
    });
    expect(sidecarsOf(noConsole)).toEqual([]);
  });
});

describe("a launcher pod's log before its containers run", () => {
  it("is 204 before the pod has a node, then the kubelet's 400 until the sidecar started", async () => {
    // No node has room for this one: the pod stays unbound, so the API server has no kubelet to ask.
    await createVm(vmManifest("log-unbound", { memory: "4000Gi" }));
    const unbound = await podOf(
      "log-unbound",
      (pod) => pod.status?.conditions?.some((condition) => condition.reason === "Unschedulable") === true,
      "the launcher pod of log-unbound to be unschedulable",
    );
    expect(unbound.spec?.nodeName).toBeUndefined();
    const unboundName = unbound.metadata?.name ?? "";
    const noContent = await rawRequest(
      cluster.emulator,
      "GET",
      `/api/v1/namespaces/${namespace}/pods/${unboundName}/log?container=guest-console-log`,
    );
    expect([noContent.status, noContent.headers["content-type"], noContent.text]).toEqual([
      204,
      undefined,
      "",
    ]);
    // client-node cannot read that answer: it has no Content-Type to parse by.
    await expect(
      core.readNamespacedPodLog({ namespace, name: unboundName, container: "guest-console-log" }),
    ).rejects.toThrow("Cannot parse content. No Content-Type defined.");
    // The API server still checks the container name first.
    expect(
      await refusal(core.readNamespacedPodLog({ namespace, name: unboundName, container: "nope" })),
    ).toEqual({
      code: 400,
      message: `container nope is not valid for pod ${unboundName}`,
    });

    // Its cloud-init Secret is missing: bound to a node, the kubelet cannot mount it and starts nothing.
    await createVm(vmManifest("log-held", { userDataSecret: "log-held-cloudinit" }));
    const held = await podOf("log-held", boundNotRunning, "the launcher pod of log-held to be bound");
    const podName = held.metadata?.name ?? "";
    // kubelet's default state for a pod with init containers, the sidecar included.
    const waiting = { waiting: { reason: "PodInitializing" } };
    const stateOf = (statuses: { name: string; state?: unknown }[] | undefined, name: string) =>
      statuses?.find((status) => status.name === name)?.state;
    expect(stateOf(held.status?.initContainerStatuses, "guest-console-log")).toEqual(waiting);
    expect(stateOf(held.status?.containerStatuses, "compute")).toEqual(waiting);
    expect(
      await refusalStatus(
        core.readNamespacedPodLog({ namespace, name: podName, container: "guest-console-log" }),
      ),
    ).toEqual({
      code: 400,
      reason: "BadRequest",
      message: `container "guest-console-log" in pod "${podName}" is waiting to start: PodInitializing`,
    });
    expect(
      await refusal(core.readNamespacedPodLog({ namespace, name: podName, container: "compute" })),
    ).toEqual({
      code: 400,
      message: `container "compute" in pod "${podName}" is waiting to start: PodInitializing`,
    });

    await core.createNamespacedSecret({
      namespace,
      body: {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "log-held-cloudinit" },
        stringData: { userdata: "#cloud-config\n" },
      },
    });
    const running = await podOf(
      "log-held",
      (pod) => pod.status?.phase === "Running",
      "the launcher pod of log-held to run",
    );
    expect(running.metadata?.name).toBe(podName);
    expect(running.status?.initContainerStatuses?.[0]?.state?.running).toBeDefined();
    expect(
      await core.readNamespacedPodLog({ namespace, name: podName, container: "guest-console-log" }),
    ).toBe("");
  });

  it("names ContainerCreating for a pod without init containers", async () => {
    // No containerDisk and no serial console log: nothing runs before compute.
    const manifest = vmManifest("log-held-plain", { userDataSecret: "log-held-plain-cloudinit" }) as {
      spec: {
        template: {
          spec: { domain: { devices: Record<string, unknown> }; volumes: { name: string }[] };
        };
      };
    };
    const template = manifest.spec.template.spec;
    template.domain.devices.logSerialConsole = false;
    template.domain.devices.disks = [];
    template.volumes = template.volumes.filter((volume) => volume.name !== "containerdisk");
    await createVm(manifest);
    const held = await podOf(
      "log-held-plain",
      boundNotRunning,
      "the launcher pod of log-held-plain to be bound",
    );
    const podName = held.metadata?.name ?? "";
    expect(held.spec?.initContainers ?? []).toEqual([]);
    expect(held.status?.initContainerStatuses).toBeUndefined();
    expect(
      await refusal(core.readNamespacedPodLog({ namespace, name: podName, container: "compute" })),
    ).toEqual({
      code: 400,
      message: `container "compute" in pod "${podName}" is waiting to start: ContainerCreating`,
    });
  });
});
