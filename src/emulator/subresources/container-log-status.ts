// Whether the kubelet has a log to hand out for a container, judged from the state it reports in the
// pod status, as kubelet's validateContainerLogStatus (kubernetes pkg/kubelet/kubelet_pods.go) judges
// it. The kubelet answers its refusal as a 400 with the error text, and the API server passes that on
// as a BadRequest Status (GenericHttpResponseChecker in apiserver's registry/generic/rest). So a log
// asked for while the container still waits to start is an error, not an empty log.
import { field, stringField, type KubeObject } from "../cluster/objects.ts";

const statusLists = ["containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"] as const;

function statusOf(pod: KubeObject, container: string): unknown {
  for (const list of statusLists) {
    const statuses = field(pod, "status", list);
    if (!Array.isArray(statuses)) continue;
    const found = statuses.find((status) => stringField(status, "name") === container);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The kubelet's words for why this container has no log to serve yet, or undefined when it has one. */
export function containerLogRefusal(pod: KubeObject, container: string): string | undefined {
  const subject = `container "${container}" in pod "${pod.metadata.name}"`;
  const status = statusOf(pod, container);
  if (status === undefined) return `${subject} is not available`;
  const lastTerminated = field(status, "lastState", "terminated");
  const state = field(status, "state");
  if (field(state, "running") !== undefined) return undefined;
  const terminated = field(state, "terminated");
  if (terminated !== undefined) {
    // A container that never got an ID (it did not start this time) falls back to the previous one.
    if (stringField(terminated, "containerID")) return undefined;
    if (stringField(lastTerminated, "containerID")) return undefined;
    return `${subject} is terminated`;
  }
  if (lastTerminated !== undefined) {
    return stringField(lastTerminated, "containerID") ? undefined : `${subject} is terminated`;
  }
  const waiting = field(state, "waiting");
  if (waiting !== undefined) {
    const reason = stringField(waiting, "reason") ?? "";
    // The two pull failures are spelled out; every other reason is quoted as it is.
    if (reason === "ErrImagePull") return `${subject} is waiting to start: image can't be pulled`;
    if (reason === "ImagePullBackOff") {
      return `${subject} is waiting to start: trying and failing to pull image`;
    }
    return `${subject} is waiting to start: ${reason}`;
  }
  return `${subject} is waiting to start - no logs yet`;
}
