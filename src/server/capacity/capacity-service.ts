// How many more sessions of each lab the cluster has room for: the nodes' allocatable resources,
// minus what Lab Console's own sessions hold, divided by what one launcher pod asks. A session holds
// what virt-controller published for its VMI (status.memory.memoryOverhead) when it did, else
// KubeVirt's formula with the settings from the KubeVirt CR.
//
// WARNING: only the console's own sessions are subtracted. Other workloads on the same nodes make the
// estimate optimistic; a VM that then finds no room shows "No node has room" as before.
import type { Lab } from "../../common/lab.ts";
import type { CapacityReport } from "../../common/operations-api.ts";
import type { ClusterFacts, Node } from "../kube/cluster-facts.ts";
import type { SessionObjects, SessionSnapshot, SessionSource } from "../sessions/source.ts";
import {
  defaultCpuAllocationRatio,
  launcherPodRequest,
  memoryOverheadBytes,
  publishedOverheadBytes,
  vmShapeOfLab,
  vmShapeOfVirtualMachine,
  type OverheadSettings,
  type PodRequest,
  type VmShape,
} from "./launcher-resources.ts";
import { countFits, nodeRooms, type NodeRoom, type SessionPod } from "./node-room.ts";

/** What the estimate needs from the cluster; read at most every `refreshMs`. */
export interface ClusterShape {
  nodes: Node[];
  settings: OverheadSettings;
}

/** Counting stops here: "at least this many" is all anyone needs to know. */
export const maxCountedFits = 999;
const defaultRefreshMs = 10_000;

export interface CapacityServiceDeps {
  facts: Pick<ClusterFacts, "nodes" | "kubeVirt">;
  source: SessionSource;
  labs: Lab[];
  now: () => Date;
  refreshMs?: number;
}

export class CapacityService {
  private cached: { readAt: number; shape: Promise<ClusterShape> } | undefined;

  constructor(private readonly deps: CapacityServiceDeps) {}

  /** Nodes and KubeVirt settings, shared by concurrent callers and kept for a few seconds. */
  clusterShape(): Promise<ClusterShape> {
    const now = this.deps.now().getTime();
    const refreshMs = this.deps.refreshMs ?? defaultRefreshMs;
    if (!this.cached || now - this.cached.readAt >= refreshMs) {
      const shape = this.readClusterShape();
      this.cached = { readAt: now, shape };
      // A failed read is not kept: the next caller asks again.
      shape.catch(() => {
        if (this.cached?.shape === shape) this.cached = undefined;
      });
    }
    return this.cached.shape;
  }

  /** The room left on each VM node with the snapshot's sessions (plus any extra pods) in place. */
  rooms(shape: ClusterShape, snapshot: SessionSnapshot, extra: PodRequest[] = []): NodeRoom[] {
    const pods = [
      ...sessionPods(snapshot, shape.settings),
      ...extra.map((request) => ({ node: undefined, request })),
    ];
    return nodeRooms(shape.nodes, pods);
  }

  /**
   * What the next VM of the lab will ask. The formula's overhead, unless the newest session of the same
   * lab and size published a larger one: the cluster then adds something the formula cannot see (a
   * network binding, another architecture, a newer KubeVirt, a since-lowered overhead ratio). The larger
   * of the two, because a published value is also stale after the ratio was raised, and a refusal a
   * little early is better than a VM that waits for a node.
   */
  podRequestFor(lab: Lab, shape: ClusterShape, snapshot: SessionSnapshot): PodRequest {
    const vm = vmShapeOfLab(lab);
    const formula = memoryOverheadBytes(vm, shape.settings.additionalOverheadRatio);
    const published = newestPublishedOverhead(snapshot, lab.id, vm);
    return launcherPodRequest(vm, shape.settings, Math.max(formula, published ?? 0));
  }

  async report(): Promise<CapacityReport> {
    const shape = await this.clusterShape();
    const snapshot = await this.deps.source.snapshot();
    const rooms = this.rooms(shape, snapshot);
    return {
      checkedAt: this.deps.now().toISOString(),
      nodes: rooms.map((room) => ({
        name: room.name,
        allocatable: { cpuMillis: room.allocatable.cpuMillis, memoryBytes: room.allocatable.memoryBytes },
        used: { cpuMillis: room.used.cpuMillis, memoryBytes: room.used.memoryBytes },
      })),
      cpuAllocationRatio: shape.settings.cpuAllocationRatio,
      labs: this.deps.labs.map((lab) => {
        const request = this.podRequestFor(lab, shape, snapshot);
        return { labId: lab.id, request, fits: countFits(rooms, request, maxCountedFits) };
      }),
    };
  }

  private async readClusterShape(): Promise<ClusterShape> {
    const [nodes, kubeVirt] = await Promise.all([this.deps.facts.nodes(), this.deps.facts.kubeVirt()]);
    const configuration = kubeVirt?.spec?.configuration;
    const ratio = configuration?.developerConfiguration?.cpuAllocationRatio;
    return {
      nodes,
      settings: {
        cpuAllocationRatio: typeof ratio === "number" && ratio > 0 ? ratio : defaultCpuAllocationRatio,
        additionalOverheadRatio: configuration?.additionalGuestMemoryOverheadRatio,
      },
    };
  }
}

/**
 * The launcher pods of the snapshot's sessions and warm VMs: on their node once the VMI is scheduled; waiting for
 * one while it is not (they will take room as soon as it frees); none once the VMI has ended.
 */
export function sessionPods(snapshot: SessionSnapshot, settings: OverheadSettings): SessionPod[] {
  const pods: SessionPod[] = [];
  // Warm VMs of scheduled classes hold room as sessions do. Oldest first: waiting pods get room in the
  // order they asked for it.
  const all = [
    ...snapshot.sessions.flatMap((session) => snapshot.objects.get(session.id) ?? []),
    ...snapshot.warm,
  ].sort((a, b) =>
    (a.vm.metadata.creationTimestamp ?? "").localeCompare(b.vm.metadata.creationTimestamp ?? ""),
  );
  for (const objects of all) {
    const placement = placementOf(objects);
    if (placement === "none") continue;
    const shape = vmShapeOfVirtualMachine(objects.vm);
    if (!shape) continue;
    // The published overhead is exactly what the pod asks; the formula only what it would ask now.
    const request = launcherPodRequest(shape, settings, publishedOverheadBytes(objects.vmi));
    pods.push({ node: placement.node, request });
  }
  return pods;
}

/** The overhead the newest VMI of this lab and size reports, if any does. */
function newestPublishedOverhead(snapshot: SessionSnapshot, labId: string, vm: VmShape): number | undefined {
  for (const session of snapshot.sessions) {
    if (session.labId !== labId) continue;
    const objects = snapshot.objects.get(session.id);
    const published = publishedOverheadBytes(objects?.vmi);
    const built = objects && vmShapeOfVirtualMachine(objects.vm);
    if (published === undefined || !built || !sameShape(built, vm)) continue;
    return published;
  }
  return undefined;
}

function sameShape(a: VmShape, b: VmShape): boolean {
  return a.vcpus === b.vcpus && a.memoryBytes === b.memoryBytes && !a.guestOnly === !b.guestOnly;
}

function placementOf({ vm, vmi }: SessionObjects): { node: string | undefined } | "none" {
  const phase = vmi?.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") return "none";
  const node = vmi?.status?.nodeName;
  if (node) return { node };
  // Never scheduled and already on its way out: it will not take room any more.
  if (vm.metadata.deletionTimestamp) return "none";
  // Stopped outside the console (runStrategy Halted, running: false): nothing runs and nothing will.
  if (!vmi && (vm.spec.runStrategy === "Halted" || vm.spec.running === false)) return "none";
  return { node: undefined };
}
