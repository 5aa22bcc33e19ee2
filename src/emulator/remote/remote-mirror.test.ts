// The mirror's ordering and translation rules against a scripted API server: a few lines of the
// Kubernetes API's behaviour (uids and resourceVersions it assigns, merge and JSON patches, deletes
// with preconditions, watch events), so each rule is seen on its own. The real-cluster suite runs the
// mirror against a real kube-apiserver.
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../../common/testing/patience.ts";
import { Registry } from "../apiserver/registry.ts";
import { ObjectStore } from "../apiserver/store.ts";
import { isJsonObject, type JsonObject, type KubeObject } from "../cluster/objects.ts";
import { namespaces, pods, virtualMachineInstances, virtualMachines } from "../cluster/resources.ts";
import type { RemoteAnswer, WatchEvent } from "./remote-api.ts";
import { RemoteMirror, type RemoteClient } from "./remote-mirror.ts";

interface Sent {
  method: string;
  path: string;
  body: unknown;
  contentType: string | undefined;
}

function merged(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return patch;
  const out: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = merged(out[key], value);
  }
  return out;
}

/** The API server, as far as these tests need it: objects by path, versions, watches by kind. */
class ScriptedServer implements RemoteClient {
  readonly sent: Sent[] = [];
  private version = 0;
  private readonly objects = new Map<string, KubeObject>();
  private readonly watchers = new Map<string, (event: WatchEvent) => void>();
  /** While set, patches wait for it: changes "on their way". */
  hold: Promise<void> | undefined;

  put(path: string, object: KubeObject, type: "ADDED" | "MODIFIED" = "ADDED"): KubeObject {
    this.version += 1;
    const stored = { ...object, metadata: { ...object.metadata, resourceVersion: String(this.version) } };
    this.objects.set(path, stored);
    this.watchers.get(this.kindOf(path))?.({ type, object: stored });
    return stored;
  }

  get(path: string): KubeObject | undefined {
    return this.objects.get(path);
  }

  readonly request = async (
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<RemoteAnswer> => {
    this.sent.push({ method, path, body, contentType });
    const item = path.replace(/\/(status|binding)$/, "");
    const current = this.objects.get(item);
    if (method === "GET") {
      const items = [...this.objects.entries()]
        .filter(([key]) => this.kindOf(key) === path)
        .map(([, value]) => value);
      return { status: 200, body: { items, metadata: { resourceVersion: String(this.version) } } };
    }
    if (method === "POST" && path.endsWith("/binding")) {
      if (!current) return { status: 404, body: {} };
      const node = (body as { target: { name: string } }).target.name;
      this.put(item, { ...current, spec: { ...(current.spec as JsonObject), nodeName: node } }, "MODIFIED");
      return { status: 201, body: {} };
    }
    if (method === "POST") {
      const object = body as KubeObject;
      const at = `${path}/${object.metadata.name}`;
      if (this.objects.has(at)) return { status: 409, body: { message: "already exists" } };
      return {
        status: 201,
        body: this.put(at, {
          ...object,
          metadata: { ...object.metadata, uid: `server-${this.version + 1}` },
        }),
      };
    }
    if (!current) return { status: 404, body: { message: "not found" } };
    if (method === "PATCH") {
      await this.hold;
      if (contentType === "application/json-patch+json") {
        const [test, add] = body as { value: unknown }[];
        if (JSON.stringify(current.metadata.finalizers ?? null) !== JSON.stringify(test?.value ?? null)) {
          return { status: 422, body: { message: "test failed" } };
        }
        return {
          status: 200,
          body: this.put(
            item,
            { ...current, metadata: { ...current.metadata, finalizers: add?.value as string[] } },
            "MODIFIED",
          ),
        };
      }
      return { status: 200, body: this.put(item, merged(current, body) as KubeObject, "MODIFIED") };
    }
    if (method === "DELETE") {
      const uid = (body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
      if (uid && uid !== current.metadata.uid)
        return { status: 409, body: { message: "Precondition failed" } };
      this.objects.delete(item);
      this.version += 1;
      this.watchers.get(this.kindOf(item))?.({
        type: "DELETED",
        object: { ...current, metadata: { ...current.metadata, resourceVersion: String(this.version) } },
      });
      return { status: 200, body: current };
    }
    return { status: 405, body: {} };
  };

  readonly watch = (
    path: string,
    _version: string,
    onEvent: (event: WatchEvent) => void,
    signal: AbortSignal,
  ) =>
    new Promise<void>((resolve) => {
      this.watchers.set(path, onEvent);
      signal.addEventListener("abort", () => resolve(), { once: true });
    });

  close(): void {}

  /** The collection of all namespaces an object's path belongs to. */
  private kindOf(path: string): string {
    if (/^\/api\/v1\/namespaces\/[^/]+$/.test(path)) return "/api/v1/namespaces";
    return path.replace(/\/namespaces\/[^/]+/, "").replace(/\/[^/]+$/, "");
  }
}

const vmPath = "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachines/lab-1";
const vmiPath = "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachineinstances/lab-1";

let mirror: RemoteMirror | undefined;

afterEach(async () => {
  await mirror?.stop();
  mirror = undefined;
});

async function started() {
  const server = new ScriptedServer();
  server.put("/api/v1/namespaces/lab-sessions", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "lab-sessions", uid: "ns-1", resourceVersion: "", creationTimestamp: "" },
    status: { phase: "Active" },
  });
  server.put(vmPath, {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachine",
    metadata: {
      name: "lab-1",
      namespace: "lab-sessions",
      uid: "vm-1",
      resourceVersion: "",
      creationTimestamp: "",
    },
    spec: { runStrategy: "Always" },
  });
  const registry = new Registry(new ObjectStore(100));
  mirror = new RemoteMirror({ store: registry.store, api: server, log: () => {} });
  await mirror.start();
  return { server, registry, mirror };
}

function vmiOf(vm: KubeObject): JsonObject {
  return {
    metadata: {
      name: "lab-1",
      namespace: "lab-sessions",
      ownerReferences: [
        {
          apiVersion: "kubevirt.io/v1",
          kind: "VirtualMachine",
          name: "lab-1",
          uid: vm.metadata.uid,
          controller: true,
        },
      ],
    },
    spec: {},
    status: { phase: "Pending" },
  };
}

describe("the mirror of a real API server", () => {
  it("copies objects in with the server's uids, and sends a finalizer as a patch that tests the list first", async () => {
    const { server, registry, mirror } = await started();
    const vm = registry.get(virtualMachines, "lab-sessions", "lab-1");
    expect(vm.metadata.uid).toBe("vm-1");
    registry.write(virtualMachines, {
      ...vm,
      metadata: { ...vm.metadata, finalizers: ["kubevirt.io/test"] },
    });
    await mirror.flushed();
    const patch = server.sent.find((sent) => sent.contentType === "application/json-patch+json");
    expect(patch?.body).toEqual([
      { op: "test", path: "/metadata/finalizers", value: null },
      { op: "add", path: "/metadata/finalizers", value: ["kubevirt.io/test"] },
    ]);
    expect(server.get(vmPath)?.metadata.finalizers).toEqual(["kubevirt.io/test"]);
  });

  it("keeps the uids it made, and names the server's in what the server stores", async () => {
    const { server, registry, mirror } = await started();
    const vmi = registry.create(
      virtualMachineInstances,
      vmiOf(registry.get(virtualMachines, "lab-sessions", "lab-1")),
      { keepStatus: true },
    );
    registry.create(pods, {
      metadata: {
        name: "virt-launcher-lab-1",
        namespace: "lab-sessions",
        labels: { "kubevirt.io/created-by": vmi.metadata.uid },
        ownerReferences: [
          {
            apiVersion: "kubevirt.io/v1",
            kind: "VirtualMachineInstance",
            name: "lab-1",
            uid: vmi.metadata.uid,
            controller: true,
          },
        ],
      },
      spec: {},
    });
    await mirror.flushed();
    const serverVmi = server.get(vmiPath);
    const serverPod = server.get("/api/v1/namespaces/lab-sessions/pods/virt-launcher-lab-1");
    expect(serverVmi?.metadata.uid).toMatch(/^server-/);
    expect(serverPod?.metadata.ownerReferences?.[0]?.uid).toBe(serverVmi?.metadata.uid);
    expect(serverPod?.metadata.labels?.["kubevirt.io/created-by"]).toBe(serverVmi?.metadata.uid);
    expect(registry.get(virtualMachineInstances, "lab-sessions", "lab-1").metadata.uid).toBe(
      vmi.metadata.uid,
    );
  });

  it("holds back watch news of an object while its changes are on their way, then takes the newest", async () => {
    const { server, registry, mirror } = await started();
    const vmi = registry.create(
      virtualMachineInstances,
      vmiOf(registry.get(virtualMachines, "lab-sessions", "lab-1")),
      { keepStatus: true },
    );
    await mirror.flushed();
    let release = () => {};
    server.hold = new Promise((resolve) => (release = resolve));
    const current = registry.get(virtualMachineInstances, "lab-sessions", "lab-1");
    registry.write(virtualMachineInstances, { ...current, status: { phase: "Running" } });
    // Meanwhile someone else labels it on the server; the news predates our change's answer.
    const onServer = server.get(vmiPath)!;
    server.put(
      vmiPath,
      { ...onServer, metadata: { ...onServer.metadata, labels: { by: "someone" } } },
      "MODIFIED",
    );
    expect(registry.get(virtualMachineInstances, "lab-sessions", "lab-1").status).toEqual({
      phase: "Running",
    });
    release();
    await mirror.flushed();
    const settled = await eventually(
      async () => registry.get(virtualMachineInstances, "lab-sessions", "lab-1"),
      (object) => object.metadata.labels?.by === "someone",
      { what: "the server's label copied in" },
    );
    expect(settled.status).toEqual({ phase: "Running" });
    expect(settled.metadata.uid).toBe(vmi.metadata.uid);
  });

  it("deletes only the object it knew: its uid goes as a precondition", async () => {
    const { server, registry, mirror } = await started();
    registry.delete(virtualMachines, "lab-sessions", "lab-1");
    await mirror.flushed();
    const deleted = server.sent.find((sent) => sent.method === "DELETE");
    expect(deleted?.body).toMatchObject({ preconditions: { uid: "vm-1" } });
    expect(server.get(vmPath)).toBeUndefined();
    expect(registry.store.get(namespaces, "", "lab-sessions")).toBeDefined();
  });
});
