// The front door of subresources.kubevirt.io as an aggregated API server, in virt-api's order (KubeVirt
// v1.9.0 pkg/virt-api/api.go, the filter around authorizor.Authorize; pkg/virt-api/rest/authorizer.go):
// discovery, version and healthz are open to anyone (noAuthEndpoints; kube-aggregator's availability
// check reads /apis/GROUP/VERSION); every other request needs the front proxy's certificate and user
// headers, then a SubjectAccessReview the real API server allows. A refusal of either is virt-api's
// 401 with the reason as plain text, not a 403 Status: kube-apiserver passes it on as it is, so a
// client denied the console on a real cluster sees that 401. A review that fails is a 500. What is let
// in goes to the same handlers as the emulator's own front door (subresources/routes.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { KubevirtSubresources } from "../subresources/routes.ts";
import { parseRequestInfo } from "../http/request-info.ts";
import { ApiError, internalError, pathNotFound, sendError, sendJson } from "../http/status.ts";
import { rejectUpgrade, writeRawResponse } from "../http/upgrade.ts";
import { subresourcesGroup } from "../cluster/resources.ts";
import { authenticateFrontProxy, type AggregatedUser } from "./front-proxy-authenticator.ts";
import type { KubeRequest } from "../remote/remote-api.ts";
import type { RequestHeaderConfig } from "./requestheader-config.ts";
import { reviewAccess } from "./subject-access-review.ts";
import { virtApiDiscovery } from "./virt-api-discovery.ts";
import { subresourceVersions } from "./virt-api-service.ts";

export interface AggregatedFrontDoorParts {
  requestHeader: RequestHeaderConfig;
  /** The real API server, for the SubjectAccessReviews. */
  kubeRequest: KubeRequest;
  subresources: KubevirtSubresources;
}

type Admission = { user: AggregatedUser } | { code: 401 | 500; reason: string };

// virt-api's noAuthEndpoints that the emulator serves, beside the discovery documents.
const openSubresourcePaths = new Set(
  subresourceVersions.flatMap((version) =>
    ["version", "healthz"].map((page) => `/apis/${subresourcesGroup}/${version}/${page}`),
  ),
);

/**
 * A path the access review and the routing read alike: no empty segment and nothing escaped. The
 * review is built from the raw path (as virt-api builds it), the routing from the parsed one, so
 * anything they could read differently is refused before either.
 */
function isCanonical(path: string): boolean {
  return !path.includes("//") && !path.includes("%") && !path.endsWith("/");
}

export function createAggregatedFrontDoor(parts: AggregatedFrontDoorParts): {
  onRequest: (request: IncomingMessage, response: ServerResponse) => void;
  onUpgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
} {
  async function admit(request: IncomingMessage, path: string): Promise<Admission> {
    const authentication = authenticateFrontProxy(request, parts.requestHeader);
    if ("refusal" in authentication) return { code: 401, reason: authentication.refusal };
    try {
      const decision = await reviewAccess(
        parts.kubeRequest,
        authentication.user,
        request.method ?? "GET",
        path,
      );
      return decision.allowed ? authentication : { code: 401, reason: decision.reason };
    } catch (error) {
      console.error(`emulator: aggregated ${request.method} ${path}: the access review failed:`, error);
      return { code: 500, reason: "internal server error" };
    }
  }

  function sendRefusal(response: ServerResponse, admission: { code: number; reason: string }): void {
    response.writeHead(admission.code, { "Content-Type": "text/plain; charset=utf-8" });
    response.end(admission.reason);
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "https://virt-api.invalid");
    const method = request.method ?? "GET";
    const discovery = method === "GET" ? virtApiDiscovery(url.pathname) : undefined;
    if (discovery !== undefined) return sendJson(response, 200, discovery);
    if (url.pathname === "/healthz") return sendJson(response, 200, { status: "ok" });
    if (!isCanonical(url.pathname)) throw pathNotFound();
    if (!openSubresourcePaths.has(url.pathname)) {
      const admission = await admit(request, url.pathname);
      if (!("user" in admission)) return sendRefusal(response, admission);
    }
    const info = parseRequestInfo(method, url);
    if (info.kind !== "resource" || info.group !== subresourcesGroup) throw pathNotFound();
    return parts.subresources.serve(request, response, info);
  }

  function onRequest(request: IncomingMessage, response: ServerResponse): void {
    route(request, response).catch((error: unknown) => {
      if (error instanceof ApiError) return sendError(response, error);
      console.error(`emulator: aggregated ${request.method} ${request.url} failed:`, error);
      sendError(response, internalError(error instanceof Error ? error.message : String(error)));
    });
  }

  async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(request.url ?? "/", "https://virt-api.invalid");
    if (!isCanonical(url.pathname)) return rejectUpgrade(socket, pathNotFound());
    const admission = await admit(request, url.pathname);
    if (!("user" in admission)) {
      const headers = { "Content-Type": "text/plain; charset=utf-8" };
      return writeRawResponse(socket, admission.code, headers, admission.reason);
    }
    const info = parseRequestInfo(request.method ?? "GET", url);
    if (info.kind !== "resource" || info.group !== subresourcesGroup || info.name === "") {
      return rejectUpgrade(socket, pathNotFound());
    }
    parts.subresources.upgrade({ request, socket, head, info, user: admission.user });
  }

  function onUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on("error", () => socket.destroy());
    upgrade(request, socket, head).catch((error: unknown) => {
      console.error(`emulator: aggregated websocket upgrade failed:`, error);
      rejectUpgrade(socket, internalError(String(error)));
    });
  }

  return { onRequest, onUpgrade };
}
