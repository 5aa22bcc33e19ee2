// The VMIs the lifecycle follows and what every step of it shares: each VMI's pending timers, the
// way a step finds its VMI (gone once it is deleted or stopping, so a late step does nothing) and
// writes its status. The launcher pod's steps (launcher-pod-steps.ts) and the guest's
// (vmi-lifecycle.ts) both run through it, which is what lets a deletion cut either short.
import type { GuestRuntime } from "../guests/guest-runtime.ts";
import type { Registry } from "../apiserver/registry.ts";
import type { JsonObject, KubeObject } from "../cluster/objects.ts";
import { pods, virtualMachineInstances } from "../cluster/resources.ts";
import type { Timings } from "../cluster/timing.ts";
import { phaseOf } from "./kubevirt-state.ts";
import { finishedPodStatus } from "./launcher-pod-status.ts";

export interface Tracked {
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

export class TrackedVmis {
  readonly byUid = new Map<string, Tracked>();
  private closed = false;

  constructor(
    readonly registry: Registry,
    readonly options: LifecycleOptions,
  ) {}

  close(): void {
    this.closed = true;
    for (const tracked of this.byUid.values()) for (const timer of tracked.timers) clearTimeout(timer);
    this.byUid.clear();
  }

  /** A step of no VMI in particular, run after the current event (never once closed). */
  later(step: () => void, delay = 0): void {
    if (this.closed) return;
    setTimeout(() => {
      if (this.closed) return;
      runStep(step);
    }, delay);
  }

  /** A step of one VMI, cancelled with its other timers when the VMI stops or goes away. */
  after(tracked: Tracked, delay: number, step: () => void): void {
    const timer = setTimeout(() => {
      tracked.timers.delete(timer);
      runStep(step);
    }, delay);
    tracked.timers.add(timer);
  }

  /** The VMI if it is still the one tracked and not being deleted. */
  current(tracked: Tracked): KubeObject | undefined {
    const vmi = this.registry.find(virtualMachineInstances, tracked.namespace, tracked.name);
    if (!vmi || vmi.metadata.uid !== tracked.uid || vmi.metadata.deletionTimestamp || tracked.stopping)
      return undefined;
    return vmi;
  }

  writeStatus(
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

  pod(tracked: Tracked): KubeObject | undefined {
    return tracked.podName ? this.registry.find(pods, tracked.namespace, tracked.podName) : undefined;
  }

  finishPod(tracked: Tracked, phase: "Succeeded" | "Failed"): void {
    const pod = this.pod(tracked);
    if (!pod || ["Succeeded", "Failed"].includes(phaseOf(pod))) return;
    this.registry.write(pods, {
      ...pod,
      status: finishedPodStatus(pod.status as JsonObject, phase, this.launcherImage()),
    });
  }

  launcherImage(): string {
    return `quay.io/kubevirt/virt-launcher:${this.options.kubevirtVersion}`;
  }
}

function runStep(step: () => void): void {
  try {
    step();
  } catch (error) {
    console.error("emulator: vmi lifecycle step failed:", error);
  }
}
