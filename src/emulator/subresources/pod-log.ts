// `pods/NAME/log`: the pod log API, as kubectl logs uses it. Only launcher pods have anything to say:
// their guest-console-log container prints the guest's serial output (KubeVirt's virt-tail); the
// other containers' logs are empty here.
import type { ServerResponse } from "node:http";
import type { GuestRuntime } from "../guest-runtime.ts";
import type { ResourceRequestInfo } from "../http/request-info.ts";
import { badRequest, methodNotAllowed, notFound } from "../http/status.ts";
import { field, stringField } from "../objects.ts";
import type { Registry } from "../registry.ts";
import { pods } from "../resources.ts";

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
  const containers = containerNames(pod);
  const container = query.get("container") ?? (containers.length === 1 ? containers[0] : undefined);
  if (container === undefined) {
    throw badRequest(
      `a container name must be specified for pod ${info.name}, choose one of: [${containers.join(" ")}]`,
    );
  }
  if (!containers.includes(container)) {
    throw badRequest(`container ${container} is not valid for pod ${info.name}`);
  }
  const vmiUid = pod.metadata.labels?.["kubevirt.io/created-by"];
  const guest = container === consoleLogContainer && vmiUid ? guests.find(vmiUid) : undefined;
  const lines = guest?.consoleLogLines() ?? [];
  const body = limitBytes(tail(lines, query.get("tailLines")), query.get("limitBytes"));
  response.writeHead(200, {
    "Content-Type": "text/plain",
    "Content-Length": Buffer.byteLength(body),
  });
  response.end(body);
}

function containerNames(pod: unknown): string[] {
  const names = (list: unknown) =>
    Array.isArray(list) ? list.map((entry) => stringField(entry, "name") ?? "") : [];
  // Since KubeVirt 1.6 guest-console-log is a native sidecar: an init container that keeps running.
  return [...names(field(pod, "spec", "containers")), ...names(field(pod, "spec", "initContainers"))];
}

function countParameter(value: string | null, name: string): number | undefined {
  if (value === null) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || (name === "limitBytes" && number === 0)) {
    throw badRequest(
      `${name}: Invalid value: "${value}": must be ${name === "limitBytes" ? "greater than 0" : "greater than or equal to 0"}`,
    );
  }
  return number;
}

function tail(lines: string[], tailLines: string | null): string {
  const count = countParameter(tailLines, "tailLines");
  const kept = count === undefined ? lines : lines.slice(Math.max(0, lines.length - count));
  return kept.map((line) => `${line}\n`).join("");
}

function limitBytes(body: string, limit: string | null): string {
  const bytes = countParameter(limit, "limitBytes");
  if (bytes === undefined) return body;
  return Buffer.from(body, "utf8").subarray(0, bytes).toString("utf8");
}
