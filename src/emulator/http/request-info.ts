// Reads a request path the way the API server's RequestInfoFactory does: which group, version,
// namespace, resource, name and subresource it addresses, and which verb it is. Routing and
// authorization both work from this one reading.
import type { RequestAttributes } from "../rbac/attributes.ts";
import { badRequest } from "./status.ts";
import { subresourcesGroup } from "../cluster/resources.ts";

export interface ResourceRequestInfo {
  kind: "resource";
  verb: string;
  group: string;
  version: string;
  namespace: string;
  resource: string;
  name: string;
  /** For authorization: `status`, `console`; KubeVirt's portforward is cut to `portforward`. */
  subresource: string;
  /** Path segments after the subresource (the port and protocol of a portforward). */
  rest: string[];
}

export interface NonResourceRequestInfo {
  kind: "nonResource";
  verb: string;
  path: string;
}

export type RequestInfo = ResourceRequestInfo | NonResourceRequestInfo;

// namespaces/{name}/status and /finalize address the namespace itself, not a resource inside it.
const namespaceSubresources = new Set(["status", "finalize"]);

function isWatchParam(value: string | null): boolean {
  return value === "true" || value === "1";
}

export function parseRequestInfo(method: string, url: URL): RequestInfo {
  const path = url.pathname;
  const lowerMethod = method.toLowerCase();
  let segments: string[];
  try {
    segments = path
      .split("/")
      .filter((segment) => segment !== "")
      .map((segment) => decodeURIComponent(segment));
  } catch {
    throw badRequest(`malformed percent-encoding in path ${path}`);
  }
  const nonResource: NonResourceRequestInfo = {
    kind: "nonResource",
    verb: lowerMethod === "head" ? "get" : lowerMethod,
    path,
  };

  let parts: string[];
  let group: string;
  let version: string;
  if (segments[0] === "api" && segments.length >= 3) {
    group = "";
    version = segments[1] ?? "";
    parts = segments.slice(2);
  } else if (segments[0] === "apis" && segments.length >= 4) {
    group = segments[1] ?? "";
    version = segments[2] ?? "";
    parts = segments.slice(3);
  } else {
    return nonResource;
  }

  let legacyWatch = false;
  if (parts[0] === "watch") {
    legacyWatch = true;
    parts = parts.slice(1);
  }

  let namespace = "";
  if (parts[0] === "namespaces" && parts.length >= 2) {
    namespace = parts[1] ?? "";
    if (parts.length > 2 && !namespaceSubresources.has(parts[2] ?? "")) parts = parts.slice(2);
  }

  const resource = parts[0] ?? "";
  const name = parts[1] ?? "";
  let subresource = "";
  let rest: string[] = [];
  if (parts.length > 2) {
    if (group === subresourcesGroup) {
      // KubeVirt's virt-api authorizes the whole sub-path, except portforward/{port}/{protocol}.
      const sub = parts.slice(2);
      if (sub[0] === "portforward") {
        subresource = "portforward";
        rest = sub.slice(1);
      } else {
        subresource = sub.join("/");
      }
    } else {
      subresource = parts[2] ?? "";
      rest = parts.slice(3);
    }
  }

  let verb: string;
  if (group === subresourcesGroup && subresource !== "") {
    verb =
      lowerMethod === "put"
        ? "update"
        : lowerMethod === "get" || lowerMethod === "head"
          ? "get"
          : lowerMethod;
  } else {
    switch (lowerMethod) {
      case "get":
      case "head":
        verb =
          legacyWatch || isWatchParam(url.searchParams.get("watch")) ? "watch" : name === "" ? "list" : "get";
        break;
      case "post":
        verb = "create";
        break;
      case "put":
        verb = "update";
        break;
      case "patch":
        verb = "patch";
        break;
      case "delete":
        verb = name === "" ? "deletecollection" : "delete";
        break;
      default:
        verb = lowerMethod;
    }
  }

  return { kind: "resource", verb, group, version, namespace, resource, name, subresource, rest };
}

export function toAttributes(info: RequestInfo): RequestAttributes {
  if (info.kind === "nonResource") return { kind: "nonResource", verb: info.verb, path: info.path };
  return {
    kind: "resource",
    verb: info.verb,
    apiGroup: info.group,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
  };
}
