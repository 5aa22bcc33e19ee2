// The launcher pod's status at each step the kubelet would report: bound and creating its
// containers, running with an IP, and finished.
import { field, stringField, timestamp, type JsonObject, type KubeObject } from "../objects.ts";
import { condition } from "./kubevirt-state.ts";

function containerStatus(name: string, image: string, state: JsonObject, ready: boolean): JsonObject {
  return { name, ready, restartCount: 0, started: ready, image, imageID: "", state };
}

export function boundPodStatus(hostIP: string): JsonObject {
  return {
    phase: "Pending",
    qosClass: "Burstable",
    hostIP,
    hostIPs: [{ ip: hostIP }],
    startTime: timestamp(),
    conditions: [condition("PodScheduled", "True")],
    containerStatuses: [containerStatus("compute", "", { waiting: { reason: "ContainerCreating" } }, false)],
  };
}

export function runningPodStatus(pod: KubeObject, podIP: string, image: string): JsonObject {
  const running = { running: { startedAt: timestamp() } };
  // The guest-console-log sidecar is there only when serial console logging is on.
  const initContainers = field(pod, "spec", "initContainers");
  const sidecars = Array.isArray(initContainers)
    ? initContainers.map((container) => stringField(container, "name") ?? "")
    : [];
  return {
    ...(pod.status as JsonObject),
    phase: "Running",
    podIP,
    podIPs: [{ ip: podIP }],
    conditions: [
      condition("PodScheduled", "True"),
      condition("Initialized", "True"),
      condition("ContainersReady", "True"),
      condition("Ready", "True"),
    ],
    containerStatuses: [containerStatus("compute", image, running, true)],
    ...(sidecars.length > 0
      ? { initContainerStatuses: sidecars.map((name) => containerStatus(name, image, running, true)) }
      : {}),
  };
}

export function finishedPodStatus(
  previous: JsonObject,
  phase: "Succeeded" | "Failed",
  image: string,
): JsonObject {
  const succeeded = phase === "Succeeded";
  const terminated = {
    terminated: {
      exitCode: succeeded ? 0 : 1,
      reason: succeeded ? "Completed" : "Error",
      finishedAt: timestamp(),
    },
  };
  return {
    ...previous,
    phase,
    conditions: [condition("PodScheduled", "True"), condition("Ready", "False", "PodCompleted")],
    containerStatuses: [containerStatus("compute", image, terminated, false)],
  };
}
