// The launcher pod's part of a VMI's start, as virt-controller, the scheduler and the kubelet play
// it: the pod created (VMI Scheduling), bound to a node that fits or left Unschedulable until one
// does, its Secrets mounted or FailedMount until they exist, its containers started (VMI Scheduled).
// The guest's part (vmi-lifecycle.ts) takes over once the pod runs; a pod whose init container
// cannot start fails the VMI here instead. Apart from the guest's part because it waits on other
// objects (nodes, Secrets, pods going away) that the guest never sees.
import type { JsonObject, KubeObject } from "../cluster/objects.ts";
import { field, isJsonObject, stringField } from "../cluster/objects.ts";
import { kubeVirts, nodes, pods, secrets } from "../cluster/resources.ts";
import { publishedMemoryOverhead } from "../cluster/memory-overhead.ts";
import type { EventRecorder } from "./events.ts";
import { condition, findCondition } from "./kubevirt-state.ts";
import { buildLauncherPod, launcherRequests, serialConsoleLogEnabled } from "./launcher-pod.ts";
import {
  initContainerStartErrorStatus,
  unstartableInitContainer,
  withContainerDisks,
  withoutImageVolumes,
} from "./container-disks.ts";
import { kubevirtGateEnabled } from "./kubevirt-gates.ts";
import { boundPodStatus, runningPodStatus } from "./launcher-pod-status.ts";
import { referencedSecrets, volumeNameFor } from "./mounted-secrets.ts";
import { PodAddresses } from "./pod-addresses.ts";
import { schedule } from "./scheduler.ts";
import type { Tracked, TrackedVmis } from "./tracked-vmis.ts";
import { phaseStatus, withConditions } from "./vmi-status.ts";

const component = "virtualmachine-controller";

export class LauncherPodSteps {
  private readonly waitingForNode = new Set<string>();
  private readonly waitingForSecrets = new Set<string>();
  private readonly addresses = new PodAddresses();

  constructor(
    private readonly vmis: TrackedVmis,
    private readonly recorder: EventRecorder,
    /** The pod runs and the VMI is Scheduled: the guest's turn. */
    private readonly podRunning: (tracked: Tracked) => void,
  ) {}

  createPod(tracked: Tracked): void {
    const vmi = this.vmis.current(tracked);
    if (!vmi) return;
    const { registry, options } = this.vmis;
    const kubevirt = registry.store.list(kubeVirts)[0];
    const configuration = field(kubevirt, "spec", "configuration");
    const ratioValue = field(configuration, "developerConfiguration", "cpuAllocationRatio");
    const ratio = typeof ratioValue === "number" && ratioValue > 0 ? ratioValue : 10;
    const overheadRatio = stringField(configuration, "additionalGuestMemoryOverheadRatio");
    const requests = launcherRequests(vmi, ratio, overheadRatio);
    const launcherPod = withContainerDisks(
      buildLauncherPod(vmi, requests, {
        kubevirtVersion: options.kubevirtVersion,
        serialConsoleLog: serialConsoleLogEnabled(vmi, configuration),
      }),
      vmi,
      {
        imageVolumes: kubevirtGateEnabled(kubevirt, "ImageVolume", options.kubevirtVersion),
        launcherImage: this.vmis.launcherImage(),
      },
    );
    // virt-controller creates the pod through the API server, which drops what its gates do not allow.
    const admitted = options.apiServerImageVolumes ? launcherPod : withoutImageVolumes(launcherPod);
    const pod = registry.create(pods, admitted, { keepStatus: true });
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
    this.vmis.writeStatus(vmi, {
      ...phaseStatus(vmi, "Scheduling"),
      conditions: withConditions(vmi, [
        condition("Ready", "False", "GuestNotRunning", "Guest VM is not reported as running"),
      ]),
      ...(memoryOverhead === undefined
        ? {}
        : { memory: { ...(isJsonObject(memory) ? memory : {}), memoryOverhead } }),
    });
    this.bind(tracked);
  }

  /** A pod went away: its address is free again. */
  podDeleted(pod: KubeObject): void {
    this.addresses.release(stringField(pod, "status", "podIP") ?? "");
  }

  retryUnschedulable(): void {
    for (const uid of [...this.waitingForNode]) {
      const tracked = this.vmis.byUid.get(uid);
      if (tracked) this.bind(tracked);
      else this.waitingForNode.delete(uid);
    }
  }

  retryWaitingForSecrets(namespace: string): void {
    for (const uid of [...this.waitingForSecrets]) {
      const tracked = this.vmis.byUid.get(uid);
      if (!tracked) this.waitingForSecrets.delete(uid);
      else if (tracked.namespace === namespace) this.podStarted(tracked);
    }
  }

  /** The VMI stops or went away: it waits for nothing any more. */
  forget(uid: string): void {
    this.waitingForNode.delete(uid);
    this.waitingForSecrets.delete(uid);
  }

  private bind(tracked: Tracked): void {
    const vmi = this.vmis.current(tracked);
    const pod = this.vmis.pod(tracked);
    if (!vmi || !pod) return;
    const { registry } = this.vmis;
    const result = schedule(registry.store, pod);
    if ("unschedulable" in result) {
      const already = findCondition(pod, "PodScheduled")?.status === "False";
      if (!already) {
        registry.write(pods, {
          ...pod,
          status: {
            ...(pod.status as JsonObject),
            conditions: [condition("PodScheduled", "False", "Unschedulable", result.unschedulable)],
          },
        });
        this.recorder.record(pod, "Warning", "FailedScheduling", result.unschedulable, "default-scheduler");
        this.vmis.writeStatus(vmi, {
          conditions: withConditions(vmi, [
            condition("PodScheduled", "False", "Unschedulable", result.unschedulable),
          ]),
        });
      }
      this.waitingForNode.add(tracked.uid);
      return;
    }
    this.waitingForNode.delete(tracked.uid);
    const node = registry.get(nodes, "", result.node);
    const hostIP = stringField(node, "status", "addresses", 0, "address") ?? "";
    registry.write(pods, {
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
      this.vmis.writeStatus(vmi, { conditions: withConditions(vmi, [], ["PodScheduled"]) });
    }
    this.vmis.after(tracked, this.vmis.options.timings.toScheduled, () => this.podStarted(tracked));
  }

  private allocateAddress(nodeName: string): string {
    const index = this.vmis.registry.store.list(nodes).findIndex((node) => node.metadata.name === nodeName);
    return this.addresses.allocate(Math.max(0, index));
  }

  /** The kubelet mounted the volumes and started the containers: pod Running, VMI Scheduled. */
  private podStarted(tracked: Tracked): void {
    const vmi = this.vmis.current(tracked);
    const pod = this.vmis.pod(tracked);
    if (!vmi || !pod) return;
    const nodeName = stringField(pod, "spec", "nodeName");
    if (!nodeName) return;
    const { registry } = this.vmis;
    const missing = referencedSecrets(vmi).filter((name) => !registry.find(secrets, tracked.namespace, name));
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
    if (unstartable !== undefined) return this.podFailedToStart(vmi, pod, unstartable);
    const podIP = this.allocateAddress(nodeName);
    const launcherImage = this.vmis.launcherImage();
    const runningPod = registry.write(pods, {
      ...pod,
      // virt-controller keeps the VMI's dynamic labels in sync on its pod.
      metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, "kubevirt.io/nodeName": nodeName } },
      status: runningPodStatus(pod, podIP, launcherImage),
    });
    this.vmis.writeStatus(
      vmi,
      {
        ...phaseStatus(vmi, "Scheduled"),
        nodeName,
        activePods: { [runningPod.metadata.uid]: nodeName },
        launcherContainerImageVersion: launcherImage,
      },
      { labels: { ...vmi.metadata.labels, "kubevirt.io/nodeName": nodeName } },
    );
    this.podRunning(tracked);
  }

  /**
   * The kubelet could not start one of the pod's init containers: the pod fails (restartPolicy Never)
   * and virt-controller fails the VMI, which never ran (lifecycle.go, the Scheduling case).
   */
  private podFailedToStart(vmi: KubeObject, pod: KubeObject, container: string): void {
    const failed = this.vmis.registry.write(pods, {
      ...pod,
      status: initContainerStartErrorStatus(pod.status as JsonObject, container, this.vmis.launcherImage()),
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
    this.vmis.writeStatus(vmi, {
      ...phaseStatus(vmi, "Failed"),
      conditions: withConditions(vmi, [
        condition("Ready", "False", "PodTerminating", "virt-launcher pod is terminating"),
      ]),
    });
  }
}
