// A scheduler for launcher pods: a pod fits a node when the node's allocatable CPU, memory, pod
// count and KubeVirt devices cover its requests plus those of the pods already running there.
// Failures read like kube-scheduler's ("0/3 nodes are available: 3 Insufficient memory.").
import { field, isJsonObject, stringField, type KubeObject } from "../cluster/objects.ts";
import { parseMillicores, parseQuantity } from "../../common/quantity.ts";
import { nodes, pods } from "../cluster/resources.ts";
import type { ObjectStore } from "../apiserver/store.ts";

interface Usage {
  cpuMillis: number;
  memoryBytes: number;
  pods: number;
  extended: Map<string, number>;
}

function containerRequests(containers: unknown, usage: Usage, onlySidecars: boolean): void {
  if (!Array.isArray(containers)) return;
  for (const container of containers) {
    if (onlySidecars && field(container, "restartPolicy") !== "Always") continue;
    const requests = field(container, "resources", "requests");
    if (!isJsonObject(requests)) continue;
    for (const [name, value] of Object.entries(requests)) {
      if (name === "cpu") usage.cpuMillis += parseMillicores(value) ?? 0;
      else if (name === "memory") usage.memoryBytes += parseQuantity(value) ?? 0;
      else if (name.includes("/"))
        usage.extended.set(name, (usage.extended.get(name) ?? 0) + (parseQuantity(value) ?? 0));
    }
  }
}

/** What a pod asks of its node: its containers plus native sidecars (init containers that keep running). */
export function podRequests(pod: KubeObject): Usage {
  const usage: Usage = { cpuMillis: 0, memoryBytes: 0, pods: 1, extended: new Map() };
  containerRequests(field(pod, "spec", "containers"), usage, false);
  containerRequests(field(pod, "spec", "initContainers"), usage, true);
  return usage;
}

function isTerminal(pod: KubeObject): boolean {
  const phase = stringField(pod, "status", "phase");
  return phase === "Succeeded" || phase === "Failed";
}

function allocatable(node: KubeObject): Usage {
  const status = field(node, "status", "allocatable");
  const usage: Usage = { cpuMillis: 0, memoryBytes: 0, pods: 0, extended: new Map() };
  if (!isJsonObject(status)) return usage;
  for (const [name, value] of Object.entries(status)) {
    if (name === "cpu") usage.cpuMillis = parseMillicores(value) ?? 0;
    else if (name === "memory") usage.memoryBytes = parseQuantity(value) ?? 0;
    else if (name === "pods") usage.pods = parseQuantity(value) ?? 0;
    else if (name.includes("/")) usage.extended.set(name, parseQuantity(value) ?? 0);
  }
  return usage;
}

export type ScheduleResult = { node: string } | { unschedulable: string };

export function schedule(store: ObjectStore, pod: KubeObject): ScheduleResult {
  const wanted = podRequests(pod);
  const selector = field(pod, "spec", "nodeSelector");
  const used = new Map<string, Usage>();
  for (const other of store.list(pods)) {
    const nodeName = stringField(other, "spec", "nodeName");
    if (!nodeName || isTerminal(other) || other.metadata.uid === pod.metadata.uid) continue;
    const total = used.get(nodeName) ?? { cpuMillis: 0, memoryBytes: 0, pods: 0, extended: new Map() };
    const requests = podRequests(other);
    total.cpuMillis += requests.cpuMillis;
    total.memoryBytes += requests.memoryBytes;
    total.pods += 1;
    for (const [name, amount] of requests.extended)
      total.extended.set(name, (total.extended.get(name) ?? 0) + amount);
    used.set(nodeName, total);
  }

  const allNodes = store.list(nodes);
  const reasons = new Map<string, number>();
  const fitting: { name: string; freeMemory: number }[] = [];
  for (const node of allNodes) {
    const problems: string[] = [];
    const labels = node.metadata.labels ?? {};
    if (isJsonObject(selector) && Object.entries(selector).some(([key, value]) => labels[key] !== value)) {
      problems.push("node(s) didn't match Pod's node affinity/selector");
    } else {
      const capacity = allocatable(node);
      const taken = used.get(node.metadata.name) ?? {
        cpuMillis: 0,
        memoryBytes: 0,
        pods: 0,
        extended: new Map(),
      };
      if (taken.pods + 1 > capacity.pods) problems.push("Too many pods");
      if (taken.cpuMillis + wanted.cpuMillis > capacity.cpuMillis) problems.push("Insufficient cpu");
      if (taken.memoryBytes + wanted.memoryBytes > capacity.memoryBytes) problems.push("Insufficient memory");
      for (const [name, amount] of wanted.extended) {
        if ((taken.extended.get(name) ?? 0) + amount > (capacity.extended.get(name) ?? 0))
          problems.push(`Insufficient ${name}`);
      }
      if (problems.length === 0) {
        fitting.push({ name: node.metadata.name, freeMemory: capacity.memoryBytes - taken.memoryBytes });
      }
    }
    for (const problem of problems) reasons.set(problem, (reasons.get(problem) ?? 0) + 1);
  }

  // Spread: the node with the most free memory wins, as the default scoring mostly does.
  fitting.sort((a, b) => b.freeMemory - a.freeMemory || a.name.localeCompare(b.name));
  const chosen = fitting[0];
  if (chosen) return { node: chosen.name };
  const described = [...reasons.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([reason, count]) => `${count} ${reason}`)
    .join(", ");
  const total = allNodes.length;
  return {
    unschedulable: `0/${total} nodes are available: ${described || `${total} node(s) were unschedulable`}. preemption: 0/${total} nodes are available: ${total} No preemption victims found for incoming pod.`,
  };
}
