// The launcher pod's status at each step the kubelet would report: bound and creating its
// containers, running with an IP, and finished. Init containers (the container disks' and the
// guest-console-log sidecar) get their own initContainerStatuses, as kubelet's
// convertToAPIContainerStatuses writes them; the pod log API reads these states
// (subresources/container-log-status.ts).
import { createHash } from "node:crypto";
import { field, stringField, timestamp, type JsonObject, type KubeObject } from "../cluster/objects.ts";
import { condition } from "./kubevirt-state.ts";

interface ContainerSpec {
  name: string;
  image: string;
  /** An init container with restartPolicy Always: it keeps running beside the pod's containers. */
  sidecar: boolean;
}

function containersOf(pod: KubeObject, list: "containers" | "initContainers"): ContainerSpec[] {
  const containers = field(pod, "spec", list);
  return Array.isArray(containers)
    ? containers.map((container) => ({
        name: stringField(container, "name") ?? "",
        image: stringField(container, "image") ?? "",
        sidecar: stringField(container, "restartPolicy") === "Always",
      }))
    : [];
}

function containerStatus(
  name: string,
  image: string,
  state: JsonObject,
  ready: boolean,
  containerID?: string,
): JsonObject {
  return {
    name,
    ready,
    restartCount: 0,
    started: ready,
    image,
    imageID: "",
    ...(containerID ? { containerID } : {}),
    state,
  };
}

/** A container that ran has an ID from the runtime; the same pod and name always get the same one. */
function runtimeContainerId(pod: KubeObject, name: string): string {
  return `containerd://${createHash("sha256").update(`${pod.metadata.uid}/${name}`).digest("hex")}`;
}

/**
 * Bound, nothing started yet: every container waits with kubelet's default reason, PodInitializing
 * when the pod has init containers (a launcher pod with guest-console-log has) and ContainerCreating
 * otherwise. It stays so while the kubelet pulls images and mounts volumes (a missing Secret).
 */
export function boundPodStatus(pod: KubeObject, hostIP: string): JsonObject {
  const initContainers = containersOf(pod, "initContainers");
  const reason = initContainers.length > 0 ? "PodInitializing" : "ContainerCreating";
  const waiting = (container: ContainerSpec) =>
    containerStatus(container.name, container.image, { waiting: { reason } }, false);
  return {
    phase: "Pending",
    qosClass: "Burstable",
    hostIP,
    hostIPs: [{ ip: hostIP }],
    startTime: timestamp(),
    conditions: [condition("PodScheduled", "True")],
    containerStatuses: containersOf(pod, "containers").map(waiting),
    ...(initContainers.length > 0 ? { initContainerStatuses: initContainers.map(waiting) } : {}),
  };
}

export function runningPodStatus(pod: KubeObject, podIP: string, image: string): JsonObject {
  const running = (container: ContainerSpec) =>
    containerStatus(
      container.name,
      image,
      { running: { startedAt: timestamp() } },
      true,
      runtimeContainerId(pod, container.name),
    );
  // Ordinary init containers (the container disks' binary copy and checks) ran to completion before
  // the containers started; the guest-console-log sidecar, there only when serial console logging is
  // on, keeps running (kubelet's computeInitContainerActions).
  const completed = (container: ContainerSpec) => {
    const containerID = runtimeContainerId(pod, container.name);
    const at = timestamp();
    const terminated = { exitCode: 0, reason: "Completed", startedAt: at, finishedAt: at, containerID };
    return containerStatus(container.name, image, { terminated }, false, containerID);
  };
  const initStatus = (container: ContainerSpec) =>
    container.sidecar ? running(container) : completed(container);
  const initContainers = containersOf(pod, "initContainers");
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
    containerStatuses: containersOf(pod, "containers").map(running),
    ...(initContainers.length > 0 ? { initContainerStatuses: initContainers.map(initStatus) } : {}),
  };
}

/**
 * The guest ended: every container that ran is terminated (the sidecar stopped with the pod), keeping
 * its container ID so its log can still be read; one that never started keeps waiting, as the kubelet
 * leaves it.
 */
export function finishedPodStatus(
  previous: JsonObject,
  phase: "Succeeded" | "Failed",
  image: string,
): JsonObject {
  const succeeded = phase === "Succeeded";
  const terminate = (status: unknown): unknown => {
    const containerID = stringField(status, "containerID");
    if (!containerID || field(status, "state", "terminated") !== undefined) return status;
    const name = stringField(status, "name") ?? "";
    // virt-tail exits cleanly on SIGTERM; compute's exit code is the guest's outcome.
    const failed = !succeeded && name === "compute";
    const terminated = {
      terminated: {
        exitCode: failed ? 1 : 0,
        reason: failed ? "Error" : "Completed",
        finishedAt: timestamp(),
        containerID,
      },
    };
    return containerStatus(name, image, terminated, false, containerID);
  };
  const terminateAll = (statuses: unknown) => (Array.isArray(statuses) ? statuses.map(terminate) : statuses);
  return {
    ...previous,
    phase,
    conditions: [condition("PodScheduled", "True"), condition("Ready", "False", "PodCompleted")],
    containerStatuses: terminateAll(previous.containerStatuses),
    ...(previous.initContainerStatuses !== undefined
      ? { initContainerStatuses: terminateAll(previous.initContainerStatuses) }
      : {}),
  };
}
