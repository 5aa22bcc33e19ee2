// `pods/NAME/log`: the pod log API, as kubectl logs uses it. Only launcher pods have anything to say:
// their guest-console-log container prints the guest's serial output (KubeVirt's virt-tail); the
// other containers' logs are empty here. A launcher pod has that container only while serial console
// logging is on for its VMI (launcher-pod.ts), so asking for it otherwise is the API server's 400.
// As on a cluster, a pod not yet on a node answers 204 No Content without a Content-Type (LogLocation
// has no kubelet to ask, and the API server's StreamObject writes 204 for the missing stream), and
// once it is on one the kubelet refuses with a 400 while the container has not started.
import type { ServerResponse } from "node:http";
import type { Registry } from "../apiserver/registry.ts";
import { field, stringField, type KubeObject } from "../cluster/objects.ts";
import { pods } from "../cluster/resources.ts";
import type { GuestRuntime } from "../guests/guest-runtime.ts";
import type { ResourceRequestInfo } from "../http/request-info.ts";
import { badRequest, methodNotAllowed, notFound } from "../http/status.ts";
import { containerLogRefusal } from "./container-log-status.ts";

export const consoleLogContainer = "guest-console-log";

export function servePodLog(
  registry: Registry,
  guests: GuestRuntime,
  method: string,
  response: ServerResponse,
  info: ResourceRequestInfo,
  query: URLSearchParams,
): void {
  if (method !== "GET") throw methodNotAllowed();
  const pod = registry.find(pods, info.namespace, info.name);
  if (!pod) throw notFound(pods, info.name);
  const container = chosenContainer(pod, info.name, query.get("container"));
  const tailLines = countParameter(query.get("tailLines"), "tailLines");
  const maxBytes = countParameter(query.get("limitBytes"), "limitBytes");
  if (!onNode(pod)) {
    response.writeHead(204);
    response.end();
    return;
  }
  const body = containerLog(pod, container, guests, { tailLines, limitBytes: maxBytes });
  response.writeHead(200, {
    "Content-Type": "text/plain",
    "Content-Length": body.length,
  });
  response.end(body);
}

/**
 * The kubelet's part: a started container's log, its last `tailLines` lines cut to `limitBytes`; a
 * 400 ApiError with the kubelet's words while the container has not started. The emulator's own API
 * server answers pods/log with it, and beside a real one the node's log endpoint does (kubelet/).
 */
export function containerLog(
  pod: KubeObject,
  container: string,
  guests: GuestRuntime,
  limits: { tailLines: number | undefined; limitBytes: number | undefined },
): Buffer {
  return limitBytes(tail(logLines(pod, container, guests), limits.tailLines), limits.limitBytes);
}

function onNode(pod: KubeObject): boolean {
  return (stringField(pod, "spec", "nodeName") ?? "") !== "";
}

/** What the kubelet would stream: the kubelet's 400 while the container has not started. */
function logLines(pod: KubeObject, container: string, guests: GuestRuntime): string[] {
  const refusal = containerLogRefusal(pod, container);
  if (refusal !== undefined) throw badRequest(refusal);
  const vmiUid = pod.metadata.labels?.["kubevirt.io/created-by"];
  const guest = container === consoleLogContainer && vmiUid ? guests.find(vmiUid) : undefined;
  return guest?.consoleLogLines() ?? [];
}

/**
 * The API server's validateContainer (pkg/registry/core/pod/strategy.go): a named container may be any
 * of the pod's, init containers included (since KubeVirt 1.6 guest-console-log is a native sidecar,
 * an init container that keeps running); unnamed, the pod's only regular container is meant.
 */
function chosenContainer(pod: unknown, podName: string, named: string | null): string {
  const names = (list: unknown) =>
    Array.isArray(list) ? list.map((entry) => stringField(entry, "name") ?? "") : [];
  const regular = names(field(pod, "spec", "containers"));
  const init = names(field(pod, "spec", "initContainers"));
  if (named !== null && named !== "") {
    if (![...init, ...regular].includes(named)) {
      throw badRequest(`container ${named} is not valid for pod ${podName}`);
    }
    return named;
  }
  if (regular.length === 1 && regular[0] !== undefined) return regular[0];
  if (regular.length === 0) throw badRequest(`a container name must be specified for pod ${podName}`);
  // VisitContainers' order: init containers first.
  throw badRequest(
    `a container name must be specified for pod ${podName}, choose one of: [${[...init, ...regular].join(" ")}]`,
  );
}

export function countParameter(value: string | null, name: string): number | undefined {
  if (value === null) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || (name === "limitBytes" && number === 0)) {
    throw badRequest(
      `${name}: Invalid value: "${value}": must be ${name === "limitBytes" ? "greater than 0" : "greater than or equal to 0"}`,
    );
  }
  return number;
}

function tail(lines: string[], count: number | undefined): string {
  const kept = count === undefined ? lines : lines.slice(Math.max(0, lines.length - count));
  return kept.map((line) => `${line}\n`).join("");
}

/**
 * The kubelet's LimitWriter: the first `bytes` bytes of the tail (its oldest, not its newest), cut
 * where they end, a line or a UTF-8 character in two included.
 */
function limitBytes(body: string, bytes: number | undefined): Buffer {
  const all = Buffer.from(body, "utf8");
  return bytes === undefined ? all : all.subarray(0, bytes);
}
