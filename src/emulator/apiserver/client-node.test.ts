// @kubernetes/client-node against the emulator: typed list calls, Watch, and the re-list a client
// must do when its resourceVersion has expired (410).
import {
  CoreV1Api,
  CustomObjectsApi,
  ListWatch,
  Watch,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vmManifest } from "../testing/manifests.ts";
import { eventually, kubeConfigWithToken, startTestEmulator, type TestEmulator } from "../testing/start.ts";

const group = "kubevirt.io";
const version = "v1";
const namespace = "lab-sessions";
const vmPath = `/apis/${group}/${version}/namespaces/${namespace}/virtualmachines`;

interface ListResult {
  metadata: { resourceVersion: string };
  items: { metadata: { name: string }; status?: { printableStatus?: string } }[];
}

let cluster: TestEmulator;
let vms: CustomObjectsApi;

beforeAll(async () => {
  // A short history so a test can outrun it and see 410 Expired.
  cluster = await startTestEmulator({ watchHistorySize: 20 });
  vms = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  await cluster.close();
});

function createVm(name: string, labels: Record<string, string>, runStrategy = "Always"): Promise<unknown> {
  return vms.createNamespacedCustomObject({
    group,
    version,
    namespace,
    plural: "virtualmachines",
    body: vmManifest(name, { labels, runStrategy }),
  });
}

describe("@kubernetes/client-node", () => {
  it("lists with a label selector and reads core kinds", async () => {
    await createVm("client-a", { course: "linux" }, "Halted");
    await createVm("client-b", { course: "net" }, "Halted");
    const list = (await vms.listNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "virtualmachines",
      labelSelector: "course=linux",
    })) as ListResult;
    expect(list.items.map((item) => item.metadata.name)).toEqual(["client-a"]);
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);
    const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((item) => item.metadata?.name)).toEqual([
      "default",
      "kube-system",
      "kubevirt",
      "lab-console",
      "lab-sessions",
    ]);
    const nodes = await core.listNode();
    expect(nodes.items[0]?.status?.capacity?.["devices.kubevirt.io/kvm"]).toBe("1k");
    const stranger = kubeConfigWithToken(cluster.kubeConfig, "not-a-token").makeApiClient(CoreV1Api);
    await expect(stranger.listNamespace()).rejects.toMatchObject({ code: 401 });
  });

  it("watches from a list's resourceVersion and sees the VM come up", async () => {
    const list = (await vms.listNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "virtualmachines",
    })) as ListResult;
    const seen: string[] = [];
    const watch = new Watch(cluster.kubeConfig);
    const request = await watch.watch(
      vmPath,
      { resourceVersion: list.metadata.resourceVersion, labelSelector: "course=watch" },
      (type, object: { metadata: { name: string }; status?: { printableStatus?: string } }) =>
        seen.push(`${type} ${object.metadata.name} ${object.status?.printableStatus ?? "-"}`),
      () => {},
    );
    try {
      await createVm("client-watched", { course: "watch" });
      await eventually(() => (seen.includes("MODIFIED client-watched Running") ? true : undefined), {
        what: "a MODIFIED event with the VM Running",
      });
      expect(seen[0]).toBe("ADDED client-watched -");
      expect(seen).toContain("MODIFIED client-watched Starting");
    } finally {
      request.abort();
    }
  });

  it("sends BOOKMARKs when asked and ends the watch after timeoutSeconds", async () => {
    const types: string[] = [];
    let ended = false;
    await new Watch(cluster.kubeConfig).watch(
      vmPath,
      { allowWatchBookmarks: true, timeoutSeconds: 1, resourceVersion: "0" },
      (type) => types.push(type),
      () => (ended = true),
    );
    await eventually(() => (ended ? true : undefined), { timeoutMs: 3000, what: "the watch to end" });
    expect(types.filter((type) => type === "ADDED").length).toBeGreaterThan(0);
    expect(types[types.length - 1]).toBe("BOOKMARK");
  });

  it("reports 410 Expired for a resourceVersion older than the history, and ListWatch recovers by re-listing", async () => {
    const first = (await vms.listNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "virtualmachines",
    })) as ListResult;
    // Outrun the 20-event history with label changes.
    for (let round = 0; round < 25; round++) {
      // client-node sends JSON patches unless told otherwise.
      await vms.patchNamespacedCustomObject({
        group,
        version,
        namespace,
        plural: "virtualmachines",
        name: "client-a",
        body: [{ op: "add", path: "/metadata/labels/round", value: String(round) }],
      });
    }
    const errors: { code?: number; reason?: string }[] = [];
    let done = false;
    await new Watch(cluster.kubeConfig).watch(
      vmPath,
      { resourceVersion: first.metadata.resourceVersion },
      (type, object: { code?: number; reason?: string }) => {
        if (type === "ERROR") errors.push(object);
      },
      () => (done = true),
    );
    await eventually(() => (done ? true : undefined), { what: "the expired watch to end" });
    expect(errors).toEqual([expect.objectContaining({ code: 410, reason: "Expired" })]);

    // client-node's ListWatch lists, watches, and re-lists after a 410: it still sees new objects.
    const informer = new ListWatch<KubernetesObject>(
      vmPath,
      new Watch(cluster.kubeConfig),
      async () => {
        const list = (await vms.listNamespacedCustomObject({
          group,
          version,
          namespace,
          plural: "virtualmachines",
        })) as {
          metadata: { resourceVersion: string };
          items: KubernetesObject[];
        };
        return { ...list, items: list.items };
      },
      false,
    );
    // Start it from the expired resourceVersion, as a client that slept too long would.
    (informer as unknown as { resourceVersion: string }).resourceVersion = first.metadata.resourceVersion;
    await informer.start();
    try {
      await createVm("client-late", { course: "late" }, "Halted");
      await eventually(() => (informer.get("client-late", namespace) ? true : undefined), {
        what: "the informer to see a VM created after the 410",
      });
      expect(informer.list(namespace).map((item) => item.metadata?.name)).toContain("client-a");
    } finally {
      await informer.stop();
    }
  });
});
