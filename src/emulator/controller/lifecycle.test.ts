// The emulated virt-controller, scheduler and virt-handler, observed through the API: VMI phases,
// VM status, run strategies, start/stop/restart, scheduling against node capacity, the cloud-init
// Secret wait and the guest runtime hook.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../cluster/objects.ts";
import type { GuestEvents, GuestRuntime } from "../guests/guest-runtime.ts";
import { vmManifest } from "../testing/manifests.ts";
import { jsonRequest } from "../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../testing/start.ts";

const vmsPath = "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachines";
const vmisPath = "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachineinstances";
const podsPath = "/api/v1/namespaces/lab-sessions/pods";
const subresources = "/apis/subresources.kubevirt.io/v1/namespaces/lab-sessions/virtualmachines";

interface Vm extends KubeObject {
  spec: { runStrategy?: string; running?: boolean };
  status?: {
    printableStatus?: string;
    created?: boolean;
    ready?: boolean;
    conditions?: { type: string; status: string; reason?: string }[];
  };
}
interface Vmi extends KubeObject {
  status?: {
    phase?: string;
    nodeName?: string;
    phaseTransitionTimestamps?: { phase: string }[];
    interfaces?: { ipAddress?: string }[];
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    memory?: Record<string, string>;
  };
}

/** A guest runtime whose boots the test releases by hand and whose guests it can make exit. */
class ScriptedGuests implements GuestRuntime {
  readonly started: string[] = [];
  readonly stopped: string[] = [];
  private readonly events = new Map<string, GuestEvents>();
  private readonly holds = new Map<string, () => void>();
  holdBoots = false;
  holdStops = false;
  private readonly heldStops: (() => void)[] = [];

  async start(vmi: KubeObject, events: GuestEvents): Promise<void> {
    this.started.push(vmi.metadata.uid);
    this.events.set(vmi.metadata.name, events);
    if (this.holdBoots) await new Promise<void>((resolve) => this.holds.set(vmi.metadata.name, resolve));
  }

  async stop(vmi: KubeObject): Promise<void> {
    this.stopped.push(vmi.metadata.uid);
    if (this.holdStops) await new Promise<void>((resolve) => this.heldStops.push(resolve));
  }

  releaseStops(): void {
    this.holdStops = false;
    for (const resolve of this.heldStops.splice(0)) resolve();
  }

  find(): undefined {
    return undefined;
  }

  async crash(): Promise<boolean> {
    return false;
  }

  async close(): Promise<void> {}

  release(name: string): boolean {
    const resolve = this.holds.get(name);
    resolve?.();
    return resolve !== undefined;
  }

  exit(name: string, phase: "Succeeded" | "Failed"): void {
    this.events.get(name)?.exited(phase, phase === "Failed" ? "guest crashed" : "guest powered off");
  }

  agent(name: string, connected: boolean): void {
    this.events.get(name)?.agent(connected);
  }
}

function api(cluster: TestEmulator) {
  return {
    get: async <T>(path: string): Promise<T | undefined> => {
      const response = await jsonRequest(cluster.emulator, "GET", path);
      return response.status === 200 ? (response.json as T) : undefined;
    },
    create: async (path: string, body: unknown) => {
      const response = await jsonRequest(cluster.emulator, "POST", path, body);
      expect(response.status, response.text).toBe(201);
      return response.json as KubeObject;
    },
    action: (name: string, action: string, body?: unknown) =>
      jsonRequest(cluster.emulator, "PUT", `${subresources}/${name}/${action}`, body),
    remove: (path: string) => jsonRequest(cluster.emulator, "DELETE", path),
    /** Polls a path until the object satisfies the predicate. */
    until: <T extends KubeObject>(path: string, predicate: (object: T) => boolean, what: string) =>
      eventually(
        async () => {
          const response = await jsonRequest(cluster.emulator, "GET", path);
          return response.status === 200 && predicate(response.json as T) ? (response.json as T) : undefined;
        },
        { what },
      ),
    gone: (path: string, what: string) =>
      eventually(
        async () => ((await jsonRequest(cluster.emulator, "GET", path)).status === 404 ? true : undefined),
        { what },
      ),
  };
}

const guests = new ScriptedGuests();
let cluster: TestEmulator;
let client: ReturnType<typeof api>;

beforeAll(async () => {
  cluster = await startTestEmulator({ guests });
  client = api(cluster);
});

afterAll(async () => {
  await cluster.close();
});

const printable = (status: string) => (vm: Vm) => vm.status?.printableStatus === status;
const phase = (wanted: string) => (vmi: Vmi) => vmi.status?.phase === wanted;

describe("VM and VMI lifecycle", () => {
  it("brings a VM up through Pending, Scheduling, Scheduled and Running", async () => {
    const vm = await client.create(
      vmsPath,
      vmManifest("up-vm", { cores: 2, memory: "4Gi", labels: { vmlabel: "x" } }),
    );
    const vmi = await client.until<Vmi>(`${vmisPath}/up-vm`, phase("Running"), "the VMI to run");
    expect(vmi.status?.phaseTransitionTimestamps?.map((entry) => entry.phase)).toEqual([
      "Pending",
      "Scheduling",
      "Scheduled",
      "Running",
    ]);
    expect(vmi.status?.nodeName).toMatch(/^node0\d$/);
    // Template labels replace the VM's; virt-controller adds the node label.
    expect(vmi.metadata.labels).toEqual({
      "labconsole.dev/session": "up-vm",
      "kubevirt.io/nodeName": vmi.status?.nodeName,
    });
    expect(vmi.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: "VirtualMachine",
        name: "up-vm",
        uid: vm.metadata.uid,
        controller: true,
      }),
    ]);
    expect(vmi.status?.interfaces?.[0]?.ipAddress).toMatch(/^10\.244\.\d+\.\d+$/);
    expect(vmi.status?.conditions).toContainEqual(expect.objectContaining({ type: "Ready", status: "True" }));

    const running = await client.until<Vm>(`${vmsPath}/up-vm`, printable("Running"), "the VM to be Running");
    expect(running.status).toMatchObject({ created: true, ready: true });
    expect(running.status?.conditions).toContainEqual(
      expect.objectContaining({ type: "Ready", status: "True" }),
    );

    const pods =
      (await client.get<{ items: KubeObject[] }>(`${podsPath}?labelSelector=vm.kubevirt.io/name%3Dup-vm`))
        ?.items ?? [];
    expect(pods).toHaveLength(1);
    const pod = pods[0] as KubeObject & {
      spec: { nodeName: string; containers: { resources: { requests: Record<string, string> } }[] };
    };
    expect(pod.metadata.labels).toMatchObject({
      "kubevirt.io": "virt-launcher",
      "kubevirt.io/created-by": vmi.metadata.uid,
      "vmi.kubevirt.io/id": "up-vm",
      "labconsole.dev/session": "up-vm",
    });
    expect(pod.spec.nodeName).toBe(vmi.status?.nodeName);
    // 2 vCPU and only memory.guest 4Gi: the VMI gets no memory request, so KubeVirt v1.9.0 counts no
    // page tables and asks 200m CPU and 4Gi + 276Mi, the 4372Mi measured on a real cluster.
    expect(vmi.spec).not.toHaveProperty(["domain", "resources", "requests", "memory"]);
    expect(pod.spec.containers[0]?.resources.requests).toMatchObject({
      cpu: "200m",
      memory: "4372Mi",
      "devices.kubevirt.io/kvm": "1",
    });
    // The exact overhead, published as VmiMemoryOverheadReport (Beta in v1.9.0) does: an integer on the
    // pod, a quantity in the VMI's status.
    expect(pod.metadata.annotations?.["kubevirt.io/memory-overhead-bytes"]).toBe(String(276 * 2 ** 20));
    expect(vmi.status?.memory).toEqual({
      guestAtBoot: "4Gi",
      guestCurrent: "4Gi",
      guestRequested: "4Gi",
      memoryOverhead: "276Mi",
    });

    expect((await client.remove(`${vmsPath}/up-vm`)).status).toBe(200);
    await client.gone(`${vmsPath}/up-vm`, "the VM to be deleted");
    await client.gone(`${vmisPath}/up-vm`, "the VMI to be deleted");
    expect(
      (await client.get<{ items: unknown[] }>(`${podsPath}?labelSelector=vm.kubevirt.io/name%3Dup-vm`))
        ?.items,
    ).toEqual([]);
    expect(guests.stopped).toContain(vmi.metadata.uid);
  });

  // The BFF ends a session with propagationPolicy Foreground. The API server then keeps the VM, marked
  // with the foregroundDeletion finalizer, until the garbage collector has deleted the dependents that
  // block it (k8s.io/apiserver pkg/registry/generic/registry/store.go, deletionFinalizersForGarbageCollection;
  // kube-controller-manager's garbagecollector.go, processDeletingDependentsItem). Found on a real API
  // server: the emulator deleted such a VM as soon as KubeVirt's own finalizer went.
  it("keeps a VM deleted in the foreground until its VMI is gone, marked foregroundDeletion", async () => {
    await client.create(vmsPath, vmManifest("fg-vm", { cores: 1, memory: "1Gi" }));
    await client.until<Vmi>(`${vmisPath}/fg-vm`, phase("Running"), "the VMI to run");
    guests.holdStops = true;
    const deleted = await jsonRequest(cluster.emulator, "DELETE", `${vmsPath}/fg-vm`, {
      apiVersion: "v1",
      kind: "DeleteOptions",
      propagationPolicy: "Foreground",
    });
    expect(deleted.status).toBe(200);
    const marked = deleted.json as Vm;
    expect(marked.metadata.deletionTimestamp).toBeDefined();
    expect(marked.metadata.finalizers).toEqual([
      "kubevirt.io/virtualMachineControllerFinalize",
      "foregroundDeletion",
    ]);
    // While the guest is still shutting down, the VMI stays, and so does its owner.
    await client.until<Vmi>(
      `${vmisPath}/fg-vm`,
      (vmi) => vmi.metadata.deletionTimestamp !== undefined,
      "the VMI to be deleted",
    );
    expect((await client.get<Vm>(`${vmsPath}/fg-vm`))?.metadata.finalizers).toContain("foregroundDeletion");
    guests.releaseStops();
    await client.gone(`${vmisPath}/fg-vm`, "the VMI to be deleted");
    await client.gone(`${vmsPath}/fg-vm`, "the VM to be deleted");
  });

  it("starts, restarts and stops a Halted VM through the subresources", async () => {
    await client.create(vmsPath, vmManifest("ctl-vm", { runStrategy: "Halted" }));
    await client.until<Vm>(`${vmsPath}/ctl-vm`, printable("Stopped"), "the VM to be Stopped");
    expect(await client.get(`${vmisPath}/ctl-vm`)).toBeUndefined();
    const restartHalted = await client.action("ctl-vm", "restart");
    expect(restartHalted.status).toBe(409);
    expect((restartHalted.json as { message: string }).message).toContain(
      "RunStategy Halted does not support manual restart requests",
    );

    expect((await client.action("ctl-vm", "start", {})).status).toBe(202);
    expect((await client.get<Vm>(`${vmsPath}/ctl-vm`))?.spec.runStrategy).toBe("Always");
    const first = await client.until<Vmi>(`${vmisPath}/ctl-vm`, phase("Running"), "the started VMI to run");
    const startAgain = await client.action("ctl-vm", "start");
    expect(startAgain.status).toBe(409);
    expect(startAgain.json).toMatchObject({
      message: 'Operation cannot be fulfilled on virtualmachine.kubevirt.io "ctl-vm": VM is already running',
    });

    expect((await client.action("ctl-vm", "restart", { gracePeriodSeconds: 0 })).status).toBe(202);
    const second = await client.until<Vmi>(
      `${vmisPath}/ctl-vm`,
      (vmi) => vmi.metadata.uid !== first.metadata.uid && phase("Running")(vmi),
      "a new VMI",
    );
    expect(second.metadata.name).toBe("ctl-vm");
    expect((await client.action("ctl-vm", "restart", { gracePeriodSeconds: 5 })).status).toBe(400);

    expect((await client.action("ctl-vm", "stop")).status).toBe(202);
    expect((await client.get<Vm>(`${vmsPath}/ctl-vm`))?.spec.runStrategy).toBe("Halted");
    await client.gone(`${vmisPath}/ctl-vm`, "the stopped VMI to go away");
    await client.until<Vm>(`${vmsPath}/ctl-vm`, printable("Stopped"), "the VM to be Stopped again");
    expect((await client.action("missing-vm", "start")).status).toBe(404);
  });

  it("drives Manual VMs with state-change requests and flips spec.running for deprecated VMs", async () => {
    await client.create(vmsPath, vmManifest("manual-vm", { runStrategy: "Manual" }));
    await client.until<Vm>(`${vmsPath}/manual-vm`, printable("Stopped"), "the Manual VM to stay Stopped");
    expect((await client.action("manual-vm", "start")).status).toBe(202);
    await client.until<Vmi>(`${vmisPath}/manual-vm`, phase("Running"), "the Manual VM's VMI to run");
    expect((await client.action("manual-vm", "stop")).status).toBe(202);
    await client.gone(`${vmisPath}/manual-vm`, "the Manual VM's VMI to go away");
    const stopped = await client.until<Vm>(
      `${vmsPath}/manual-vm`,
      printable("Stopped"),
      "the Manual VM to be Stopped",
    );
    expect(stopped.spec.runStrategy).toBe("Manual");
    expect(stopped.status).not.toHaveProperty("stateChangeRequests");
    expect((await client.action("manual-vm", "stop")).status).toBe(409);

    await client.create(vmsPath, vmManifest("legacy-vm", { running: true }));
    await client.until<Vm>(`${vmsPath}/legacy-vm`, printable("Running"), "the legacy VM to run");
    expect((await client.action("legacy-vm", "stop")).status).toBe(202);
    expect((await client.get<Vm>(`${vmsPath}/legacy-vm`))?.spec).toMatchObject({ running: false });
    await client.until<Vm>(`${vmsPath}/legacy-vm`, printable("Stopped"), "the legacy VM to stop");
  });

  it("lets Once stay down after the guest powers off and RerunOnFailure restart after a crash", async () => {
    await client.create(vmsPath, vmManifest("once-vm", { runStrategy: "Once" }));
    await client.until<Vmi>(`${vmisPath}/once-vm`, phase("Running"), "the Once VMI to run");
    guests.exit("once-vm", "Succeeded");
    await client.until<Vmi>(`${vmisPath}/once-vm`, phase("Succeeded"), "the Once VMI to succeed");
    await client.until<Vm>(`${vmsPath}/once-vm`, printable("Stopped"), "the Once VM to be Stopped");

    await client.create(vmsPath, vmManifest("rerun-vm", { runStrategy: "RerunOnFailure" }));
    const first = await client.until<Vmi>(
      `${vmisPath}/rerun-vm`,
      phase("Running"),
      "the RerunOnFailure VMI to run",
    );
    guests.exit("rerun-vm", "Failed");
    await client.until<Vmi>(
      `${vmisPath}/rerun-vm`,
      (vmi) => vmi.metadata.uid !== first.metadata.uid && phase("Running")(vmi),
      "a replacement VMI",
    );
  });

  it("adds AgentConnected while the guest agent runs, mirrors it to the VM and removes it after", async () => {
    await client.create(vmsPath, vmManifest("agent-vm"));
    await client.until<Vmi>(`${vmisPath}/agent-vm`, phase("Running"), "the VMI to run");
    const hasAgent = (object: Vm | Vmi) =>
      object.status?.conditions?.some((condition) => condition.type === "AgentConnected") === true;
    guests.agent("agent-vm", true);
    const vmi = await client.until<Vmi>(`${vmisPath}/agent-vm`, hasAgent, "AgentConnected on the VMI");
    expect(vmi.status?.conditions?.find((condition) => condition.type === "AgentConnected")).toEqual({
      type: "AgentConnected",
      status: "True",
      lastProbeTime: expect.stringMatching(/^\d{4}-/),
      lastTransitionTime: null,
    });
    await client.until<Vm>(`${vmsPath}/agent-vm`, hasAgent, "AgentConnected mirrored on the VM");

    guests.agent("agent-vm", false);
    await client.until<Vmi>(`${vmisPath}/agent-vm`, (object) => !hasAgent(object), "the condition gone");
    await client.until<Vm>(`${vmsPath}/agent-vm`, (object) => !hasAgent(object), "the VM's copy gone");
  });

  it("waits for the guest runtime before reporting Running", async () => {
    guests.holdBoots = true;
    try {
      await client.create(vmsPath, vmManifest("held-vm"));
      await client.until<Vmi>(`${vmisPath}/held-vm`, phase("Scheduled"), "the VMI to be Scheduled");
      await eventually(() => (guests.release("held-vm") ? true : undefined), {
        what: "the guest boot to begin",
      });
      await client.until<Vmi>(`${vmisPath}/held-vm`, phase("Running"), "the VMI to run after the boot");
    } finally {
      guests.holdBoots = false;
    }
  });

  it("keeps the VMI Scheduling until its cloud-init Secret exists", async () => {
    await client.create(vmsPath, vmManifest("secret-vm", { userDataSecret: "secret-vm-cloudinit" }));
    await eventually(
      async () => {
        const events = await client.get<{ items: { reason: string; message: string }[] }>(
          "/api/v1/namespaces/lab-sessions/events?fieldSelector=reason%3DFailedMount",
        );
        return events?.items.find((event) =>
          event.message.includes('secret "secret-vm-cloudinit" not found'),
        );
      },
      { what: "the FailedMount event" },
    );
    expect((await client.get<Vmi>(`${vmisPath}/secret-vm`))?.status?.phase).toBe("Scheduling");
    await client.create("/api/v1/namespaces/lab-sessions/secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "secret-vm-cloudinit" },
      stringData: { userdata: "#cloud-config\n" },
    });
    await client.until<Vmi>(
      `${vmisPath}/secret-vm`,
      phase("Running"),
      "the VMI to run once the Secret exists",
    );
  });
});

describe("scheduling against node capacity", () => {
  let small: TestEmulator;
  let smallClient: ReturnType<typeof api>;

  beforeAll(async () => {
    small = await startTestEmulator({
      cluster: {
        kubevirt: { cpuAllocationRatio: 4, disabledFeatureGates: ["ImageVolume"] },
        kubernetes: { version: "v1.34.2", featureGates: { ImageVolume: false } },
        nodes: [
          { name: "small", cpu: "4", memory: "8Gi" },
          { name: "nokvm", cpu: "64", memory: "256Gi", kvm: false },
        ],
      },
    });
    smallClient = api(small);
  });

  afterAll(async () => {
    await small.close();
  });

  it("reports the configured KubeVirt CR and uses its cpuAllocationRatio", async () => {
    const kubevirt = await smallClient.get<KubeObject>(
      "/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts/kubevirt",
    );
    expect(kubevirt).toMatchObject({
      spec: {
        configuration: {
          developerConfiguration: { disabledFeatureGates: ["ImageVolume"], cpuAllocationRatio: 4 },
        },
      },
      status: { observedKubeVirtVersion: "v1.9.0", phase: "Deployed" },
    });
    await smallClient.create(vmsPath, vmManifest("ratio-vm", { cores: 2, memory: "4Gi" }));
    const pod = await eventually(
      async () =>
        (
          await smallClient.get<{ items: KubeObject[] }>(
            `${podsPath}?labelSelector=vm.kubevirt.io/name%3Dratio-vm`,
          )
        )?.items[0],
    );
    expect(JSON.stringify(pod)).toContain('"cpu":"500m"');
    await smallClient.until<Vmi>(`${vmisPath}/ratio-vm`, phase("Running"), "the VMI to run on the kvm node");
    expect((await smallClient.get<Vmi>(`${vmisPath}/ratio-vm`))?.status?.nodeName).toBe("small");
  });

  it("leaves a VMI that fits no node unschedulable, and schedules it when capacity frees up", async () => {
    await smallClient.create(vmsPath, vmManifest("second-vm", { cores: 2, memory: "4Gi" }));
    const vmi = await smallClient.until<Vmi>(
      `${vmisPath}/second-vm`,
      (candidate) =>
        candidate.status?.conditions?.some((condition) => condition.type === "PodScheduled") ?? false,
      "the VMI to be unschedulable",
    );
    expect(vmi.status?.phase).toBe("Scheduling");
    expect(vmi.status?.conditions).toContainEqual(
      expect.objectContaining({
        type: "PodScheduled",
        status: "False",
        reason: "Unschedulable",
        message: expect.stringMatching(
          /^0\/2 nodes are available: 1 Insufficient devices\.kubevirt\.io\/kvm, 1 Insufficient memory\./,
        ),
      }),
    );
    const vm = await smallClient.until<Vm>(
      `${vmsPath}/second-vm`,
      printable("ErrorUnschedulable"),
      "the VM to show ErrorUnschedulable",
    );
    expect(vm.status?.conditions).toContainEqual(
      expect.objectContaining({ type: "PodScheduled", status: "False", reason: "Unschedulable" }),
    );

    await smallClient.remove(`${vmsPath}/ratio-vm`);
    await smallClient.until<Vmi>(
      `${vmisPath}/second-vm`,
      phase("Running"),
      "the waiting VMI to run once the first is gone",
    );
    await smallClient.until<Vm>(`${vmsPath}/second-vm`, printable("Running"), "the VM to recover");
  });

  it("reports the Kubernetes side of the feature gates in /metrics", async () => {
    const metrics = await jsonRequest(small.emulator, "GET", "/metrics");
    expect(metrics.text).toContain('kubernetes_feature_enabled{name="ImageVolume",stage="BETA"} 0');
    expect(metrics.text).toContain('git_version="v1.34.2"');
  });
});
