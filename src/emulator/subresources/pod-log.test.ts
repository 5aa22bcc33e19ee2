// The pod log API over the wire, as kubectl and client-node use it: a launcher pod carries the
// guest-console-log container only while serial console logging is on for its VMI, and asking for
// it otherwise is the API server's own 400.
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
import { labSessionsNamespace as namespace } from "../cluster.ts";
import { vmManifest } from "../testing/manifests.ts";
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
  await customObjects.createNamespacedCustomObject({
    group: "kubevirt.io",
    version: "v1",
    namespace,
    plural: "virtualmachines",
    body: manifest,
  });
  return eventually(
    async () => {
      const { items } = await core.listNamespacedPod({
        namespace,
        labelSelector: `vm.kubevirt.io/name=${name}`,
      });
      return items.find((pod) => pod.status?.phase === "Running");
    },
    { what: `the launcher pod of ${name} to run` },
  );
}

function sidecarsOf(pod: V1Pod): string[] {
  return (pod.spec?.initContainers ?? []).map((container) => container.name);
}

async function refusal(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(ApiException);
  const { code, body } = error as ApiException<unknown>;
  const status = (typeof body === "string" ? JSON.parse(body) : body) as { message: string };
  return { code, message: status.message };
}

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
  it("is there by default; an unnamed container means the pod's only regular one, compute", async () => {
    const pod = await launcherPodOf("log-default");
    const podName = pod.metadata?.name ?? "";
    expect(sidecarsOf(pod)).toEqual(["guest-console-log"]);
    expect(pod.status?.initContainerStatuses?.map((status) => status.name)).toEqual(["guest-console-log"]);
    // No guests in this emulator: the log is there and empty.
    expect(
      await core.readNamespacedPodLog({ namespace, name: podName, container: "guest-console-log" }),
    ).toBe("");
    expect(await core.readNamespacedPodLog({ namespace, name: podName })).toBe("");
  });

  it("is gone with the cluster's disableSerialConsoleLog, and asking for it is a 400", async () => {
    await setClusterSerialConsoleLog(true);
    try {
      const pod = await launcherPodOf("log-off");
      const podName = pod.metadata?.name ?? "";
      expect(sidecarsOf(pod)).toEqual([]);
      expect(pod.status?.initContainerStatuses).toBeUndefined();
      // What the scheduler counted: the compute container alone (100m for 1 vCPU at ratio 10).
      expect(pod.spec?.containers.map((container) => container.resources?.requests?.cpu)).toEqual(["100m"]);
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
