// A VMI's life as virt-controller, the scheduler, the kubelet and virt-handler play it out:
// Pending -> Scheduling (launcher pod created, bound to a node if one fits) -> Scheduled (pod
// running; nodeName and the kubevirt.io/nodeName label set) -> Running (guest started; IP, Ready).
// Each phase is appended to phaseTransitionTimestamps. A deleted VMI (it carries a finalizer) shuts
// its guest down, turns Succeeded, loses its pod and then goes away.
import { ApiError } from "../http/status.ts";
import {
  field,
  isJsonObject,
  stringField,
  timestamp,
  type JsonObject,
  type KubeObject,
} from "../cluster/objects.ts";
import type { GuestRuntime } from "../guests/guest-runtime.ts";
import type { Registry } from "../apiserver/registry.ts";
import { kubeVirts, nodes, pods, secrets, virtualMachineInstances } from "../cluster/resources.ts";
import type { StoreEvent } from "../apiserver/store.ts";
import { vmiFinalizer } from "../apiserver/admission/vmi-mutator.ts";
import type { EventRecorder } from "./events.ts";
import { condition, conditionsOf, findCondition, phaseOf, type Condition } from "./kubevirt-state.ts";
import { buildLauncherPod, launcherRequests, serialConsoleLogEnabled } from "./launcher-pod.ts";
import { publishedMemoryOverhead, vcpuCount } from "../cluster/memory-overhead.ts";
import {
  initContainerStartErrorStatus,
  unstartableInitContainer,
  withContainerDisks,
  withoutImageVolumes,
} from "./container-disks.ts";
import { kubevirtGateEnabled } from "./kubevirt-gates.ts";
import { boundPodStatus, finishedPodStatus, runningPodStatus } from "./launcher-pod-status.ts";
import { PodAddresses } from "./pod-addresses.ts";
import { schedule } from "./scheduler.ts";
import type { Timings } from "../cluster/timing.ts";

const component = "virtualmachine-controller";
const agentConnected = "AgentConnected";

/** As virt-handler writes it: a probe time, no transition time, no reason. */
function agentConnectedCondition(): Condition {
  return { type: agentConnected, status: "True", lastProbeTime: timestamp(), lastTransitionTime: null };
}

interface Tracked {
  uid: string;
  namespace: string;
  name: string;
  timers: Set<NodeJS.Timeout>;
  podName?: string;
  guestStarted: boolean;
  /** The guest agent is up; the AgentConnected condition shows it once the VMI is Running. */
  agentConnected: boolean;
  stopping: boolean;
}

export interface LifecycleOptions {
  timings: Timings;
  guests: GuestRuntime;
  kubevirtVersion: string;
  /** The API server's ImageVolume gate: with it off, pods lose their `image` volumes on create. */
  apiServerImageVolumes: boolean;
}

/** Replaces conditions of the given types, keeping lastTransitionTime when a status did not change. */
function withConditions(object: KubeObject, updates: Condition[], remove: string[] = []): Condition[] {
  const current = (field(object, "status", "conditions") as Condition[] | undefined) ?? [];
  const kept = current.filter(
    (item) => !remove.includes(item.type) && !updates.some((update) => update.type === item.type),
  );
  const merged = updates.map((update) => {
    const before = current.find((item) => item.type === update.type);
    return before && before.status === update.status && before.reason === update.reason
      ? { ...update, lastTransitionTime: before.lastTransitionTime ?? update.lastTransitionTime ?? null }
      : update;
  });
  return [...merged, ...kept];
}

/** Names of the Secrets a VMI's volumes read, which the kubelet must mount before the pod runs. */
function referencedSecrets(vmi: KubeObject): string[] {
  const volumes = field(vmi, "spec", "volumes");
  if (!Array.isArray(volumes)) return [];
  const names = new Set<string>();
  for (const volume of volumes) {
    for (const source of ["cloudInitNoCloud", "cloudInitConfigDrive"]) {
      for (const ref of ["secretRef", "networkDataSecretRef"]) {
        const name = stringField(volume, source, ref, "name");
        if (name) names.add(name);
      }
    }
    const secretName = stringField(volume, "secret", "secretName");
    if (secretName) names.add(secretName);
  }
  return [...names];
}

function volumeNameFor(vmi: KubeObject, secretName: string): string {
  const volumes = field(vmi, "spec", "volumes");
  const match = Array.isArray(volumes)
    ? volumes.find((volume) => JSON.stringify(volume).includes(`"${secretName}"`))
    : undefined;
  return stringField(match, "name") ?? secretName;
}

export class VmiLifecycle {
  private readonly tracked = new Map<string, Tracked>();
  private readonly waitingForNode = new Set<string>();
  private readonly waitingForSecrets = new Set<string>();
  private readonly addresses = new PodAddresses();
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(
    private readonly registry: Registry,
    private readonly recorder: EventRecorder,
    private readonly options: LifecycleOptions,
  ) {
    this.unsubscribe = registry.store.subscribe((event) => this.observe(event));
  }

  stop(): void {
    this.closed = true;
    this.unsubscribe();
    for (const tracked of this.tracked.values()) for (const timer of tracked.timers) clearTimeout(timer);
    this.tracked.clear();
  }

  private observe(event: StoreEvent): void {
    const { resource, object, type } = event;
    if (resource === virtualMachineInstances) {
      if (type === "ADDED" && phaseOf(object) === "Pending") this.begin(object);
      else if (
        type === "MODIFIED" &&
        object.metadata.deletionTimestamp &&
        !event.previous?.metadata.deletionTimestamp
      ) {
        this.later(() => this.beginStop(object.metadata.uid));
      } else if (type === "DELETED") this.forget(object);
    } else if (
      resource === pods &&
      (type === "DELETED" || ["Succeeded", "Failed"].includes(phaseOf(object)))
    ) {
      if (type === "DELETED") this.addresses.release(stringField(object, "status", "podIP") ?? "");
      this.later(() => this.retryUnschedulable());
    } else if (resource === nodes) {
      this.later(() => this.retryUnschedulable());
    } else if (resource === secrets && type === "ADDED") {
      this.later(() => this.retryWaitingForSecrets(object.metadata.namespace ?? ""));
    }
  }

  private later(step: () => void, delay = 0): void {
    if (this.closed) return;
    setTimeout(() => {
      if (this.closed) return;
      try {
        step();
      } catch (error) {
        console.error("emulator: vmi lifecycle step failed:", error);
      }
    }, delay);
  }

  private after(tracked: Tracked, delay: number, step: () => void): void {
    const timer = setTimeout(() => {
      tracked.timers.delete(timer);
      try {
        step();
      } catch (error) {
        console.error("emulator: vmi lifecycle step failed:", error);
      }
    }, delay);
    tracked.timers.add(timer);
  }

  /** The VMI if it is still the one tracked and not being deleted. */
  private current(tracked: Tracked): KubeObject | undefined {
    const vmi = this.registry.find(virtualMachineInstances, tracked.namespace, tracked.name);
    if (!vmi || vmi.metadata.uid !== tracked.uid || vmi.metadata.deletionTimestamp || tracked.stopping)
      return undefined;
    return vmi;
  }

  private writeStatus(
    vmi: KubeObject,
    status: JsonObject,
    metadata: Partial<KubeObject["metadata"]> = {},
  ): KubeObject {
    return this.registry.write(virtualMachineInstances, {
      ...vmi,
      metadata: { ...vmi.metadata, ...metadata },
      status: { ...(vmi.status as JsonObject | undefined), ...status },
    });
  }

  private phaseStatus(vmi: KubeObject, phase: string): JsonObject {
    const previous = field(vmi, "status", "phaseTransitionTimestamps");
    const list = Array.isArray(previous) ? [...previous] : [];
    if (!list.some((entry) => stringField(entry, "phase") === phase)) {
      list.push({ phase, phaseTransitionTimestamp: timestamp() });
    }
    return { phase, phaseTransitionTimestamps: list };
  }

  private begin(vmi: KubeObject): void {
    const tracked: Tracked = {
      uid: vmi.metadata.uid,
      namespace: vmi.metadata.namespace ?? "",
      name: vmi.metadata.name,
      timers: new Set(),
      guestStarted: false,
      agentConnected: false,
      stopping: false,
    };
    this.tracked.set(tracked.uid, tracked);
    this.after(tracked, 0, () => {
      const current = this.current(tracked);
      if (!current) return;
      // Phase Pending and the finalizer came with admission (vmi-mutator.ts).
      this.writeStatus(current, {
        conditions: withConditions(current, [
          condition("Ready", "False", "PodNotExists", "virt-launcher pod has not yet been scheduled"),
        ]),
        guestOSInfo: {},
        qosClass: "Burstable",
      });
      this.after(tracked, this.options.timings.toScheduling, () => this.createPod(tracked));
    });
  }

  private createPod(tracked: Tracked): void {
    const vmi = this.current(tracked);
    if (!vmi) return;
    const kubevirt = this.registry.store.list(kubeVirts)[0];
    const configuration = field(kubevirt, "spec", "configuration");
    const ratioValue = field(configuration, "developerConfiguration", "cpuAllocationRatio");
    const ratio = typeof ratioValue === "number" && ratioValue > 0 ? ratioValue : 10;
    const overheadRatio = stringField(configuration, "additionalGuestMemoryOverheadRatio");
    const requests = launcherRequests(vmi, ratio, overheadRatio);
    const launcherPod = withContainerDisks(
      buildLauncherPod(vmi, requests, {
        kubevirtVersion: this.options.kubevirtVersion,
        serialConsoleLog: serialConsoleLogEnabled(vmi, configuration),
      }),
      vmi,
      {
        imageVolumes: kubevirtGateEnabled(kubevirt, "ImageVolume", this.options.kubevirtVersion),
        launcherImage: this.launcherImage(),
      },
    );
    // virt-controller creates the pod through the API server, which drops what its gates do not allow.
    const admitted = this.options.apiServerImageVolumes ? launcherPod : withoutImageVolumes(launcherPod);
    const pod = this.registry.create(pods, admitted, { keepStatus: true });
    tracked.podName = pod.metadata.name;
    this.recorder.record(
      vmi,
      "Normal",
      "SuccessfulCreate",
      `Created virtual machine pod ${pod.metadata.name}`,
      component,
    );
    // The webhook set the guest fields at admission; virt-controller adds the overhead it published in
    // the pod's annotation (updateMemoryOverheadStatusFromPod).
    const memoryOverhead = publishedMemoryOverhead(pod);
    const memory = field(vmi, "status", "memory");
    this.writeStatus(vmi, {
      ...this.phaseStatus(vmi, "Scheduling"),
      conditions: withConditions(vmi, [
        condition("Ready", "False", "GuestNotRunning", "Guest VM is not reported as running"),
      ]),
      ...(memoryOverhead === undefined
        ? {}
        : { memory: { ...(isJsonObject(memory) ? memory : {}), memoryOverhead } }),
    });
    this.bind(tracked);
  }

  private pod(tracked: Tracked): KubeObject | undefined {
    return tracked.podName ? this.registry.find(pods, tracked.namespace, tracked.podName) : undefined;
  }

  private bind(tracked: Tracked): void {
    const vmi = this.current(tracked);
    const pod = this.pod(tracked);
    if (!vmi || !pod) return;
    const result = schedule(this.registry.store, pod);
    if ("unschedulable" in result) {
      const already = findCondition(pod, "PodScheduled")?.status === "False";
      if (!already) {
        this.registry.write(pods, {
          ...pod,
          status: {
            ...(pod.status as JsonObject),
            conditions: [condition("PodScheduled", "False", "Unschedulable", result.unschedulable)],
          },
        });
        this.recorder.record(pod, "Warning", "FailedScheduling", result.unschedulable, "default-scheduler");
        this.writeStatus(vmi, {
          conditions: withConditions(vmi, [
            condition("PodScheduled", "False", "Unschedulable", result.unschedulable),
          ]),
        });
      }
      this.waitingForNode.add(tracked.uid);
      return;
    }
    this.waitingForNode.delete(tracked.uid);
    const node = this.registry.get(nodes, "", result.node);
    const hostIP = stringField(node, "status", "addresses", 0, "address") ?? "";
    this.registry.write(pods, {
      ...pod,
      spec: { ...(pod.spec as JsonObject), nodeName: result.node },
      status: boundPodStatus(pod, hostIP),
    });
    this.recorder.record(
      pod,
      "Normal",
      "Scheduled",
      `Successfully assigned ${tracked.namespace}/${pod.metadata.name} to ${result.node}`,
      "default-scheduler",
    );
    if (findCondition(vmi, "PodScheduled")) {
      this.writeStatus(vmi, { conditions: withConditions(vmi, [], ["PodScheduled"]) });
    }
    this.after(tracked, this.options.timings.toScheduled, () => this.podStarted(tracked));
  }

  private retryUnschedulable(): void {
    for (const uid of [...this.waitingForNode]) {
      const tracked = this.tracked.get(uid);
      if (tracked) this.bind(tracked);
      else this.waitingForNode.delete(uid);
    }
  }

  private retryWaitingForSecrets(namespace: string): void {
    for (const uid of [...this.waitingForSecrets]) {
      const tracked = this.tracked.get(uid);
      if (!tracked) this.waitingForSecrets.delete(uid);
      else if (tracked.namespace === namespace) this.podStarted(tracked);
    }
  }

  private allocateAddress(nodeName: string): string {
    const index = this.registry.store.list(nodes).findIndex((node) => node.metadata.name === nodeName);
    return this.addresses.allocate(Math.max(0, index));
  }

  /** The kubelet mounted the volumes and started the containers: pod Running, VMI Scheduled. */
  private podStarted(tracked: Tracked): void {
    const vmi = this.current(tracked);
    const pod = this.pod(tracked);
    if (!vmi || !pod) return;
    const nodeName = stringField(pod, "spec", "nodeName");
    if (!nodeName) return;
    const missing = referencedSecrets(vmi).filter(
      (name) => !this.registry.find(secrets, tracked.namespace, name),
    );
    if (missing.length > 0) {
      if (!this.waitingForSecrets.has(tracked.uid)) {
        this.waitingForSecrets.add(tracked.uid);
        for (const name of missing) {
          this.recorder.record(
            pod,
            "Warning",
            "FailedMount",
            `MountVolume.SetUp failed for volume "${volumeNameFor(vmi, name)}" : secret "${name}" not found`,
            "kubelet",
          );
        }
      }
      return;
    }
    this.waitingForSecrets.delete(tracked.uid);
    const unstartable = unstartableInitContainer(pod);
    if (unstartable !== undefined) return this.podFailedToStart(tracked, vmi, pod, unstartable);
    const podIP = this.allocateAddress(nodeName);
    const runningPod = this.registry.write(pods, {
      ...pod,
      // virt-controller keeps the VMI's dynamic labels in sync on its pod.
      metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, "kubevirt.io/nodeName": nodeName } },
      status: runningPodStatus(pod, podIP, this.launcherImage()),
    });
    this.writeStatus(
      vmi,
      {
        ...this.phaseStatus(vmi, "Scheduled"),
        nodeName,
        activePods: { [runningPod.metadata.uid]: nodeName },
        launcherContainerImageVersion: this.launcherImage(),
      },
      { labels: { ...vmi.metadata.labels, "kubevirt.io/nodeName": nodeName } },
    );
    this.after(tracked, this.options.timings.toRunning, () => this.startGuest(tracked));
  }

  /**
   * The kubelet could not start one of the pod's init containers: the pod fails (restartPolicy Never)
   * and virt-controller fails the VMI, which never ran (lifecycle.go, the Scheduling case).
   */
  private podFailedToStart(tracked: Tracked, vmi: KubeObject, pod: KubeObject, container: string): void {
    const failed = this.registry.write(pods, {
      ...pod,
      status: initContainerStartErrorStatus(pod.status as JsonObject, container, this.launcherImage()),
    });
    const message = stringField(
      failed,
      "status",
      "initContainerStatuses",
      0,
      "state",
      "terminated",
      "message",
    );
    this.recorder.record(pod, "Warning", "Failed", `Error: ${message ?? "StartError"}`, "kubelet");
    this.writeStatus(vmi, {
      ...this.phaseStatus(vmi, "Failed"),
      conditions: withConditions(vmi, [
        condition("Ready", "False", "PodTerminating", "virt-launcher pod is terminating"),
      ]),
    });
  }

  private startGuest(tracked: Tracked): void {
    const vmi = this.current(tracked);
    if (!vmi) return;
    tracked.guestStarted = true;
    this.options.guests
      .start(vmi, {
        exited: (phase, reason) => this.later(() => this.guestExited(tracked, phase, reason)),
        agent: (connected) => this.later(() => this.agentChanged(tracked, connected)),
      })
      .then(
        () => this.markRunning(tracked),
        (error: unknown) =>
          this.guestExited(tracked, "Failed", error instanceof Error ? error.message : String(error)),
      )
      .catch((error: unknown) => console.error("emulator: vmi lifecycle step failed:", error));
  }

  private markRunning(tracked: Tracked): void {
    const vmi = this.current(tracked);
    const pod = this.pod(tracked);
    if (!vmi || !pod || phaseOf(vmi) !== "Scheduled") return;
    const podIP = stringField(pod, "status", "podIP") ?? "";
    const interfaces = field(vmi, "spec", "domain", "devices", "interfaces");
    const interfaceName = stringField(interfaces, 0, "name") ?? "default";
    const macHex = tracked.uid.replace(/-/g, "").slice(0, 10);
    const mac = `02:${macHex.match(/../g)?.join(":") ?? "00:00:00:00:00"}`;
    const cpu = field(vmi, "spec", "domain", "cpu");
    this.writeStatus(vmi, {
      ...this.phaseStatus(vmi, "Running"),
      conditions: withConditions(vmi, [
        condition("Ready", "True"),
        ...(tracked.agentConnected ? [agentConnectedCondition()] : []),
      ]),
      interfaces: [
        {
          name: interfaceName,
          ipAddress: podIP,
          ipAddresses: [podIP],
          mac,
          infoSource: "domain",
          podInterfaceName: "eth0",
          queueCount: 1,
          linkState: "up",
        },
      ],
      currentCPUTopology: isJsonObject(cpu)
        ? { cores: cpu.cores ?? 1, sockets: cpu.sockets ?? 1, threads: cpu.threads ?? 1 }
        : { cores: 1, sockets: vcpuCount(vmi), threads: 1 },
      machine: { type: "pc-q35-rhel9.6.0" },
      migrationMethod: "BlockMigration",
      migrationTransport: "Unix",
      runtimeUser: 107,
      selinuxContext: "none",
    });
    this.recorder.record(vmi, "Normal", "Started", "VirtualMachineInstance started.", "virt-handler");
  }

  /**
   * virt-handler adds AgentConnected while the agent's channel is connected and removes it (never sets
   * it False) when it is not; the VM controller mirrors it onto the VM.
   */
  private agentChanged(tracked: Tracked, connected: boolean): void {
    tracked.agentConnected = connected;
    const vmi = this.current(tracked);
    if (!vmi || phaseOf(vmi) !== "Running") return;
    const present = findCondition(vmi, agentConnected) !== undefined;
    if (connected === present) return;
    this.writeStatus(vmi, {
      conditions: connected
        ? [...conditionsOf(vmi), agentConnectedCondition()]
        : withConditions(vmi, [], [agentConnected]),
    });
  }

  /** The guest stopped by itself: VMI and pod reach a final phase; the VM's run strategy decides what next. */
  private guestExited(tracked: Tracked, phase: "Succeeded" | "Failed", reason: string): void {
    tracked.guestStarted = false;
    tracked.agentConnected = false;
    const vmi = this.current(tracked);
    if (!vmi) return;
    this.finishPod(tracked, phase);
    this.writeStatus(vmi, {
      ...this.phaseStatus(vmi, phase),
      ...(phase === "Failed" ? { reason } : {}),
      conditions: withConditions(
        vmi,
        [condition("Ready", "False", "GuestNotRunning", "Guest VM is not reported as running")],
        [agentConnected],
      ),
    });
    this.recorder.record(
      vmi,
      phase === "Failed" ? "Warning" : "Normal",
      phase === "Failed" ? "Failed" : "Stopped",
      phase === "Failed"
        ? `The VirtualMachineInstance crashed: ${reason}`
        : "The VirtualMachineInstance was shut down.",
      "virt-handler",
    );
  }

  private finishPod(tracked: Tracked, phase: "Succeeded" | "Failed"): void {
    const pod = this.pod(tracked);
    if (!pod || ["Succeeded", "Failed"].includes(phaseOf(pod))) return;
    this.registry.write(pods, {
      ...pod,
      status: finishedPodStatus(pod.status as JsonObject, phase, this.launcherImage()),
    });
  }

  private launcherImage(): string {
    return `quay.io/kubevirt/virt-launcher:${this.options.kubevirtVersion}`;
  }

  /** Deletion: shut the guest down, report Succeeded, delete the pod, release the finalizer. */
  private beginStop(uid: string): void {
    const tracked = this.tracked.get(uid);
    if (!tracked || tracked.stopping) return;
    tracked.stopping = true;
    for (const timer of tracked.timers) clearTimeout(timer);
    tracked.timers.clear();
    this.waitingForNode.delete(uid);
    this.waitingForSecrets.delete(uid);
    const stop = () => {
      const stopGuest = tracked.guestStarted ? this.stopGuest(tracked) : Promise.resolve();
      void stopGuest.then(() =>
        this.after(tracked, this.options.timings.toStopped, () => this.finishDeletion(tracked)),
      );
    };
    // A paused guest gets the ACPI shutdown too, but cannot act on it: virt-handler kills its domain
    // once the grace period is over (pkg/virt-launcher/virtwrap/manager.go 2158-2159,
    // pkg/virt-handler/vm.go 1653-1740, v1.9.0).
    if (this.options.guests.find(uid)?.paused) this.after(tracked, this.gracePeriodMs(uid), stop);
    else stop();
  }

  /** The VMI's terminationGracePeriodSeconds, KubeVirt's default of 30 s (DefaultGracePeriodSeconds) when it names none. */
  private gracePeriodMs(uid: string): number {
    const tracked = this.tracked.get(uid);
    const vmi = tracked && this.registry.find(virtualMachineInstances, tracked.namespace, tracked.name);
    const seconds = field(vmi, "spec", "terminationGracePeriodSeconds");
    return (typeof seconds === "number" ? seconds : 30) * this.options.timings.gracePeriodSecond;
  }

  private async stopGuest(tracked: Tracked): Promise<void> {
    tracked.guestStarted = false;
    tracked.agentConnected = false;
    const vmi = this.registry.find(virtualMachineInstances, tracked.namespace, tracked.name);
    if (!vmi) return;
    try {
      await this.options.guests.stop(vmi);
    } catch (error) {
      console.error(`emulator: stopping the guest of ${tracked.namespace}/${tracked.name} failed:`, error);
    }
  }

  private finishDeletion(tracked: Tracked): void {
    const vmi = this.registry.find(virtualMachineInstances, tracked.namespace, tracked.name);
    if (!vmi || vmi.metadata.uid !== tracked.uid) return;
    let latest = vmi;
    if (phaseOf(vmi) === "Running" || phaseOf(vmi) === "Scheduled") {
      this.finishPod(tracked, "Succeeded");
      latest = this.writeStatus(vmi, {
        ...this.phaseStatus(vmi, "Succeeded"),
        conditions: withConditions(
          vmi,
          [condition("Ready", "False", "PodTerminating", "virt-launcher pod is terminating")],
          [agentConnected],
        ),
      });
    }
    const pod = this.pod(tracked);
    if (pod) this.deleteQuietly(pod);
    this.registry.removeFinalizer(virtualMachineInstances, latest, vmiFinalizer);
  }

  private deleteQuietly(pod: KubeObject): void {
    try {
      this.registry.delete(pods, pod.metadata.namespace ?? "", pod.metadata.name);
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 404)) throw error;
    }
  }

  private forget(vmi: KubeObject): void {
    const tracked = this.tracked.get(vmi.metadata.uid);
    if (!tracked) return;
    for (const timer of tracked.timers) clearTimeout(timer);
    this.tracked.delete(vmi.metadata.uid);
    this.waitingForNode.delete(vmi.metadata.uid);
    this.waitingForSecrets.delete(vmi.metadata.uid);
    if (tracked.guestStarted) void this.options.guests.stop(vmi).catch(() => {});
  }
}
