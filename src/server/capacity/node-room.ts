// Which nodes can run VMs and how much room they have left, with placement done the way the
// scheduler (and the emulator) does it: a pod fits a node when CPU, memory and pod count cover it plus
// what is already there; among the nodes that fit, the one with the most free memory wins.
import type { Node } from "../kube/cluster-facts.ts";
import type { PodRequest } from "./launcher-resources.ts";
import { parseMillicores, parseQuantity } from "../../common/quantity.ts";

export const kvmDevice = "devices.kubevirt.io/kvm";
/** virt-handler labels the nodes it serves; KubeVirt puts this nodeSelector on every launcher pod. */
export const schedulableLabel = "kubevirt.io/schedulable";

export interface NodeRoom {
  name: string;
  allocatable: { cpuMillis: number; memoryBytes: number; pods: number };
  used: { cpuMillis: number; memoryBytes: number; pods: number };
}

/** A launcher pod of one session: on its node once scheduled, else waiting for one. */
export interface SessionPod {
  node: string | undefined;
  request: PodRequest;
}

/** Why a node cannot take VMs at all, or undefined when it can. */
export function whyNotForVms(node: Node): string | undefined {
  const ready = node.status?.conditions?.find((condition) => condition.type === "Ready");
  if (ready && ready.status !== "True") return "not Ready";
  if (node.spec?.unschedulable) return "cordoned (unschedulable)";
  if ((parseQuantity(node.status?.allocatable?.[kvmDevice]) ?? 0) <= 0) return `no ${kvmDevice}`;
  if (node.metadata.labels?.[schedulableLabel] !== "true") return `not labelled ${schedulableLabel}=true`;
  return undefined;
}

/**
 * The nodes that can run VMs, with the room the given pods take: scheduled pods count on their
 * node, waiting ones are placed in order where they would go (and left out if they fit nowhere).
 */
export function nodeRooms(nodes: Node[], pods: SessionPod[]): NodeRoom[] {
  const rooms = nodes
    .filter((node) => whyNotForVms(node) === undefined)
    .map((node): NodeRoom => {
      const allocatable = node.status?.allocatable ?? {};
      return {
        name: node.metadata.name ?? "",
        allocatable: {
          cpuMillis: parseMillicores(allocatable.cpu) ?? 0,
          memoryBytes: parseQuantity(allocatable.memory) ?? 0,
          pods: parseQuantity(allocatable.pods) ?? 110,
        },
        used: { cpuMillis: 0, memoryBytes: 0, pods: 0 },
      };
    });
  const byName = new Map(rooms.map((room) => [room.name, room]));
  for (const pod of pods) {
    const room = pod.node === undefined ? undefined : byName.get(pod.node);
    if (room) take(room, pod.request);
  }
  for (const pod of pods) {
    if (pod.node !== undefined) continue;
    const room = bestFit(rooms, pod.request);
    if (room) take(room, pod.request);
  }
  return rooms;
}

/** How many more pods of this size fit, placing each where the scheduler would; at most `limit`. */
export function countFits(rooms: NodeRoom[], request: PodRequest, limit: number): number {
  const scratch = rooms.map((room) => ({ ...room, used: { ...room.used } }));
  let count = 0;
  while (count < limit) {
    const room = bestFit(scratch, request);
    if (!room) break;
    take(room, request);
    count += 1;
  }
  return count;
}

/** The most free CPU and memory on any one node (what the next VM could get at best). */
export function largestFree(rooms: NodeRoom[]): { cpuMillis: number; memoryBytes: number } {
  let best = { cpuMillis: 0, memoryBytes: 0 };
  for (const room of rooms) {
    const free = freeOf(room);
    if (free.memoryBytes > best.memoryBytes)
      best = { cpuMillis: free.cpuMillis, memoryBytes: free.memoryBytes };
  }
  return best;
}

function freeOf(room: NodeRoom) {
  return {
    cpuMillis: room.allocatable.cpuMillis - room.used.cpuMillis,
    memoryBytes: room.allocatable.memoryBytes - room.used.memoryBytes,
    pods: room.allocatable.pods - room.used.pods,
  };
}

function bestFit(rooms: NodeRoom[], request: PodRequest): NodeRoom | undefined {
  let best: NodeRoom | undefined;
  for (const room of rooms) {
    const free = freeOf(room);
    if (free.pods < 1 || free.cpuMillis < request.cpuMillis || free.memoryBytes < request.memoryBytes)
      continue;
    if (
      !best ||
      free.memoryBytes > freeOf(best).memoryBytes ||
      (free.memoryBytes === freeOf(best).memoryBytes && room.name < best.name)
    ) {
      best = room;
    }
  }
  return best;
}

function take(room: NodeRoom, request: PodRequest): void {
  room.used.cpuMillis += request.cpuMillis;
  room.used.memoryBytes += request.memoryBytes;
  room.used.pods += 1;
}
