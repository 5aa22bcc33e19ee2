// A VMI's life as virt-controller, the scheduler, the kubelet and virt-handler play it out:
// Pending -> Scheduling (launcher pod created, bound to a node if one fits) -> Scheduled (pod
// running; nodeName and the kubevirt.io/nodeName label set) -> Running (guest started; IP, Ready).
// Each phase is appended to phaseTransitionTimestamps. A deleted VMI (it carries a finalizer) shuts
// its guest down, turns Succeeded, loses its pod and then goes away.
//
// This file follows the store's events and plays the guest's part and the deletion; the launcher
// pod's part up to Scheduled is launcher-pod-steps.ts, the status each step writes vmi-status.ts.
import { ApiError } from "../http/status.ts";
import { field, stringField, type KubeObject } from "../cluster/objects.ts";
import type { Registry } from "../apiserver/registry.ts";
import { nodes, pods, secrets, virtualMachineInstances } from "../cluster/resources.ts";
import type { StoreEvent } from "../apiserver/store.ts";
import { vmiFinalizer } from "../apiserver/admission/vmi-mutator.ts";
import type { EventRecorder } from "./events.ts";
import { condition, conditionsOf, findCondition, phaseOf } from "./kubevirt-state.ts";
import { LauncherPodSteps } from "./launcher-pod-steps.ts";
import { TrackedVmis, type LifecycleOptions, type Tracked } from "./tracked-vmis.ts";
import {
  agentConnected,
  agentConnectedCondition,
  phaseStatus,
  runningStatus,
  withConditions,
} from "./vmi-status.ts";

export class VmiLifecycle {
  private readonly vmis: TrackedVmis;
  private readonly pods: LauncherPodSteps;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly registry: Registry,
    private readonly recorder: EventRecorder,
    private readonly options: LifecycleOptions,
  ) {
    this.vmis = new TrackedVmis(registry, options);
    this.pods = new LauncherPodSteps(this.vmis, recorder, (tracked) =>
      this.vmis.after(tracked, options.timings.toRunning, () => this.startGuest(tracked)),
    );
    this.unsubscribe = registry.store.subscribe((event) => this.observe(event));
  }

  stop(): void {
    this.unsubscribe();
    this.vmis.close();
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
        this.vmis.later(() => this.beginStop(object.metadata.uid));
      } else if (type === "DELETED") this.forget(object);
    } else if (
      resource === pods &&
      (type === "DELETED" || ["Succeeded", "Failed"].includes(phaseOf(object)))
    ) {
      if (type === "DELETED") this.pods.podDeleted(object);
      this.vmis.later(() => this.pods.retryUnschedulable());
    } else if (resource === nodes) {
      this.vmis.later(() => this.pods.retryUnschedulable());
    } else if (resource === secrets && type === "ADDED") {
      this.vmis.later(() => this.pods.retryWaitingForSecrets(object.metadata.namespace ?? ""));
    }
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
    this.vmis.byUid.set(tracked.uid, tracked);
    this.vmis.after(tracked, 0, () => {
      const current = this.vmis.current(tracked);
      if (!current) return;
      // Phase Pending and the finalizer came with admission (vmi-mutator.ts).
      this.vmis.writeStatus(current, {
        conditions: withConditions(current, [
          condition("Ready", "False", "PodNotExists", "virt-launcher pod has not yet been scheduled"),
        ]),
        guestOSInfo: {},
        qosClass: "Burstable",
      });
      this.vmis.after(tracked, this.options.timings.toScheduling, () => this.pods.createPod(tracked));
    });
  }

  private startGuest(tracked: Tracked): void {
    const vmi = this.vmis.current(tracked);
    if (!vmi) return;
    tracked.guestStarted = true;
    this.options.guests
      .start(vmi, {
        exited: (phase, reason) => this.vmis.later(() => this.guestExited(tracked, phase, reason)),
        agent: (connected) => this.vmis.later(() => this.agentChanged(tracked, connected)),
      })
      .then(
        () => this.markRunning(tracked),
        (error: unknown) =>
          this.guestExited(tracked, "Failed", error instanceof Error ? error.message : String(error)),
      )
      .catch((error: unknown) => console.error("emulator: vmi lifecycle step failed:", error));
  }

  private markRunning(tracked: Tracked): void {
    const vmi = this.vmis.current(tracked);
    const pod = this.vmis.pod(tracked);
    if (!vmi || !pod || phaseOf(vmi) !== "Scheduled") return;
    const podIP = stringField(pod, "status", "podIP") ?? "";
    this.vmis.writeStatus(vmi, runningStatus(vmi, podIP, tracked.agentConnected));
    this.recorder.record(vmi, "Normal", "Started", "VirtualMachineInstance started.", "virt-handler");
  }

  /**
   * virt-handler adds AgentConnected while the agent's channel is connected and removes it (never sets
   * it False) when it is not; the VM controller mirrors it onto the VM.
   */
  private agentChanged(tracked: Tracked, connected: boolean): void {
    tracked.agentConnected = connected;
    const vmi = this.vmis.current(tracked);
    if (!vmi || phaseOf(vmi) !== "Running") return;
    const present = findCondition(vmi, agentConnected) !== undefined;
    if (connected === present) return;
    this.vmis.writeStatus(vmi, {
      conditions: connected
        ? [...conditionsOf(vmi), agentConnectedCondition()]
        : withConditions(vmi, [], [agentConnected]),
    });
  }

  /** The guest stopped by itself: VMI and pod reach a final phase; the VM's run strategy decides what next. */
  private guestExited(tracked: Tracked, phase: "Succeeded" | "Failed", reason: string): void {
    tracked.guestStarted = false;
    tracked.agentConnected = false;
    const vmi = this.vmis.current(tracked);
    if (!vmi) return;
    this.vmis.finishPod(tracked, phase);
    this.vmis.writeStatus(vmi, {
      ...phaseStatus(vmi, phase),
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

  /** Deletion: shut the guest down, report Succeeded, delete the pod, release the finalizer. */
  private beginStop(uid: string): void {
    const tracked = this.vmis.byUid.get(uid);
    if (!tracked || tracked.stopping) return;
    tracked.stopping = true;
    for (const timer of tracked.timers) clearTimeout(timer);
    tracked.timers.clear();
    this.pods.forget(uid);
    const stop = () => {
      const stopGuest = tracked.guestStarted ? this.stopGuest(tracked) : Promise.resolve();
      void stopGuest.then(() =>
        this.vmis.after(tracked, this.options.timings.toStopped, () => this.finishDeletion(tracked)),
      );
    };
    // A paused guest gets the ACPI shutdown too, but cannot act on it: virt-handler kills its domain
    // once the grace period is over (pkg/virt-launcher/virtwrap/manager.go 2158-2159,
    // pkg/virt-handler/vm.go 1653-1740, v1.9.0).
    if (this.options.guests.find(uid)?.paused) this.vmis.after(tracked, this.gracePeriodMs(uid), stop);
    else stop();
  }

  /** The VMI's terminationGracePeriodSeconds, KubeVirt's default of 30 s (DefaultGracePeriodSeconds) when it names none. */
  private gracePeriodMs(uid: string): number {
    const tracked = this.vmis.byUid.get(uid);
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
      this.vmis.finishPod(tracked, "Succeeded");
      latest = this.vmis.writeStatus(vmi, {
        ...phaseStatus(vmi, "Succeeded"),
        conditions: withConditions(
          vmi,
          [condition("Ready", "False", "PodTerminating", "virt-launcher pod is terminating")],
          [agentConnected],
        ),
      });
    }
    const pod = this.vmis.pod(tracked);
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
    const tracked = this.vmis.byUid.get(vmi.metadata.uid);
    if (!tracked) return;
    for (const timer of tracked.timers) clearTimeout(timer);
    this.vmis.byUid.delete(vmi.metadata.uid);
    this.pods.forget(vmi.metadata.uid);
    if (tracked.guestStarted) void this.options.guests.stop(vmi).catch(() => {});
  }
}
