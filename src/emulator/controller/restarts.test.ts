// What comes back by itself under runStrategy Always, as virt-controller decides it: a VMI is Pending
// from the moment it is admitted; a guest that crashes after running is replaced at once; a VMI whose
// launcher pod never starts (the ImageVolume trap) counts as a failed start, and the next attempt
// waits out KubeVirt's backoff while the VM shows CrashLoopBackOff.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadClusterConfig } from "../cluster/cluster-config.ts";
import type { KubeObject } from "../cluster/objects.ts";
import type { GuestEvents, GuestRuntime } from "../guests/guest-runtime.ts";
import { vmManifest } from "../testing/manifests.ts";
import { jsonRequest } from "../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../testing/start.ts";

const namespace = "/namespaces/lab-sessions";
const vmsPath = `/apis/kubevirt.io/v1${namespace}/virtualmachines`;
const vmisPath = `/apis/kubevirt.io/v1${namespace}/virtualmachineinstances`;
const podsPath = `/api/v1${namespace}/pods`;
const eventsPath = `/api/v1${namespace}/events`;
const trapConfig = fileURLToPath(
  new URL("../../../docs/examples/imagevolume-trap.cluster.yaml", import.meta.url),
);

interface Vm extends KubeObject {
  status?: {
    printableStatus?: string;
    startFailure?: { consecutiveFailCount: number; lastFailedVMIUID: string; retryAfterTimestamp: string };
  };
}
interface Vmi extends KubeObject {
  status?: { phase?: string; phaseTransitionTimestamps?: { phase: string }[] };
}
interface Pod extends KubeObject {
  spec: {
    volumes?: { name: string; image?: unknown; emptyDir?: unknown }[];
    initContainers?: { name: string; command?: string[] }[];
    containers: { name: string }[];
  };
  status?: {
    phase?: string;
    initContainerStatuses?: { name: string; state: { terminated?: { reason: string; message: string } } }[];
  };
}

/** Guests that boot at once and crash when the test says so. */
class CrashableGuests implements GuestRuntime {
  private readonly events = new Map<string, GuestEvents>();
  async start(vmi: KubeObject, events: GuestEvents): Promise<void> {
    this.events.set(vmi.metadata.uid, events);
  }
  async stop(): Promise<void> {}
  find(): undefined {
    return undefined;
  }
  async crash(vmiUid: string, reason: string): Promise<boolean> {
    const events = this.events.get(vmiUid);
    events?.exited("Failed", reason);
    return events !== undefined;
  }
  async close(): Promise<void> {}
}

async function get<T>(cluster: TestEmulator, path: string): Promise<T | undefined> {
  const answer = await jsonRequest(cluster.emulator, "GET", path);
  return answer.status === 200 ? (answer.json as T) : undefined;
}

function until<T>(cluster: TestEmulator, path: string, ok: (object: T) => boolean, what: string) {
  return eventually(
    async () => {
      const object = await get<T>(cluster, path);
      return object !== undefined && ok(object) ? object : undefined;
    },
    { what, timeoutMs: 10_000 },
  );
}

async function launcherPods(cluster: TestEmulator, name: string): Promise<Pod[]> {
  const list = await get<{ items: Pod[] }>(
    cluster,
    `${podsPath}?labelSelector=vm.kubevirt.io/name%3D${name}`,
  );
  return list?.items ?? [];
}

describe("on a healthy cluster (the emulator's default)", () => {
  const guests = new CrashableGuests();
  let cluster: TestEmulator;
  beforeAll(async () => {
    cluster = await startTestEmulator({ guests });
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it("admits a VMI with phase Pending and KubeVirt's finalizer already set", async () => {
    const template = (vmManifest("bare") as { spec: { template: { spec: unknown } } }).spec.template;
    const created = await jsonRequest(cluster.emulator, "POST", vmisPath, {
      apiVersion: "kubevirt.io/v1",
      kind: "VirtualMachineInstance",
      metadata: { name: "bare-vmi" },
      spec: template.spec,
      status: { phase: "Running" },
    });
    expect(created.status, created.text).toBe(201);
    const vmi = created.json as Vmi;
    expect(vmi.status?.phase).toBe("Pending");
    expect(vmi.status?.phaseTransitionTimestamps?.map((entry) => entry.phase)).toEqual(["Pending"]);
    expect(vmi.metadata.finalizers).toContain("kubevirt.io/foregroundDeleteVirtualMachine");
  });

  it("replaces a guest that crashed after running with a new VMI at once, with no start failure", async () => {
    expect((await jsonRequest(cluster.emulator, "POST", vmsPath, vmManifest("crashy"))).status).toBe(201);
    const first = await until<Vmi>(
      cluster,
      `${vmisPath}/crashy`,
      (vmi) => vmi.status?.phase === "Running",
      "Running",
    );
    // The healthy cluster copies container disks into an emptyDir (ImageVolume disabled in KubeVirt).
    const [pod] = await launcherPods(cluster, "crashy");
    expect(pod?.spec.initContainers?.map((container) => container.name)).toContain("container-disk-binary");
    expect(pod?.spec.volumes?.some((volume) => volume.image !== undefined)).toBe(false);

    expect(await guests.crash(first.metadata.uid, "OOM killed")).toBe(true);
    const second = await until<Vmi>(
      cluster,
      `${vmisPath}/crashy`,
      (vmi) => vmi.metadata.uid !== first.metadata.uid && vmi.status?.phase === "Running",
      "a new VMI to run",
    );
    expect(second.metadata.uid).not.toBe(first.metadata.uid);
    const vm = await get<Vm>(cluster, `${vmsPath}/crashy`);
    expect(vm?.status?.startFailure).toBeUndefined();
    expect(vm?.status?.printableStatus).toBe("Running");
  });
});

describe("with KubeVirt's ImageVolume on and the API server's off (docs/examples/imagevolume-trap)", () => {
  let cluster: TestEmulator;
  beforeAll(async () => {
    cluster = await startTestEmulator({ cluster: loadClusterConfig(trapConfig) });
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it("accepts the launcher pod without its image volumes, fails it, and backs off before each retry", async () => {
    expect((await jsonRequest(cluster.emulator, "POST", vmsPath, vmManifest("trapped"))).status).toBe(201);
    const failedPod = await eventually(
      async () => (await launcherPods(cluster, "trapped")).find((pod) => pod.status?.phase === "Failed"),
      { what: "the launcher pod to fail" },
    );
    // Dropped silently: no image volume is left, yet the init container still runs the binary it held.
    expect(failedPod.spec.volumes?.some((volume) => volume.image !== undefined)).toBe(false);
    const init = failedPod.spec.initContainers?.find((container) => container.name === "volumecontainerdisk");
    expect(init?.command).toEqual(["/container-disk-binary/usr/bin/container-disk"]);
    const terminated = failedPod.status?.initContainerStatuses?.[0]?.state.terminated;
    expect(terminated?.reason).toBe("StartError");
    expect(terminated?.message).toContain(
      'exec: "/container-disk-binary/usr/bin/container-disk": stat /container-disk-binary/usr/bin/container-disk: no such file or directory',
    );

    const looping = await until<Vm>(
      cluster,
      `${vmsPath}/trapped`,
      (vm) => vm.status?.printableStatus === "CrashLoopBackOff",
      "CrashLoopBackOff",
    );
    // Polling may first see the loop after a retry already failed again (a loaded machine).
    const failures = looping.status?.startFailure?.consecutiveFailCount ?? 0;
    expect(failures).toBeGreaterThanOrEqual(1);
    expect(Date.parse(looping.status?.startFailure?.retryAfterTimestamp ?? "")).toBeGreaterThan(0);

    // After the backoff virt-controller tries again, and the next failure is counted too.
    const again = await until<Vm>(
      cluster,
      `${vmsPath}/trapped`,
      (vm) => (vm.status?.startFailure?.consecutiveFailCount ?? 0) > failures,
      "another failed start",
    );
    expect(again.status?.startFailure?.lastFailedVMIUID).not.toBe(
      looping.status?.startFailure?.lastFailedVMIUID,
    );
    const events = await get<{ items: { reason: string; message: string }[] }>(cluster, eventsPath);
    expect(events?.items).toContainEqual(
      expect.objectContaining({
        reason: "Failed",
        message: expect.stringContaining("no such file or directory") as unknown,
      }),
    );
  });
});
