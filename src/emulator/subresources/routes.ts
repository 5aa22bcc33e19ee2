// KubeVirt's subresources.kubevirt.io requests, routed to their handlers beside this file: version and
// healthz, start/stop/restart, pause/unpause, the guest agent's pages and the websocket streams. Two
// front doors route through it: the emulator's own API server (../apiserver.ts, bearer tokens and
// RBAC) and the aggregated server the real kube-apiserver proxies to (../aggregation/, front-proxy
// certificates and SubjectAccessReviews), so both serve exactly the same handlers once a request is
// let in.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { ClusterConfig } from "../cluster/cluster-config.ts";
import type { GuestRuntime } from "../guests/guest-runtime.ts";
import { kubevirtVersionInfo } from "../apiserver/discovery.ts";
import type { Registry } from "../apiserver/registry.ts";
import { decodeBody, mediaType, readBody } from "../http/body.ts";
import type { ResourceRequestInfo } from "../http/request-info.ts";
import {
  ApiError,
  badRequest,
  internalError,
  methodNotAllowed,
  pathNotFound,
  sendJson,
} from "../http/status.ts";
import { rejectUpgrade, type UpgradeContext, type UpgradeRoutes } from "../http/upgrade.ts";
import { changeVmState, type LifecycleAction } from "./state-change.ts";
import type { PauseAction, VmiPauses } from "./pause.ts";
import { guestAgentSubresources, serveGuestAgent } from "./guest-agent.ts";
import { serveScreenshot } from "./vnc.ts";

export interface KubevirtSubresourceParts {
  config: ClusterConfig;
  registry: Registry;
  /** For the guest agent subresources (guestosinfo, userlist, filesystemlist). */
  guests: GuestRuntime;
  /** virt-api's pause and unpause, and virt-handler's syncs after them. */
  pauses: VmiPauses;
  /** The websocket streams: console, portforward. */
  upgrades: UpgradeRoutes;
}

export interface KubevirtSubresources {
  /** An authorized HTTP request; throws (or rejects with) an ApiError for the answer to a bad one. */
  serve(request: IncomingMessage, response: ServerResponse, info: ResourceRequestInfo): Promise<void>;
  /** An authorized websocket upgrade: handed to its stream, or refused on the raw socket. */
  upgrade(context: UpgradeContext): void;
}

const lifecycleActions = new Set(["start", "stop", "restart"]);
const pauseActions = new Set(["pause", "unpause"]);
const streamingSubresources = new Set(["console", "portforward", "vnc", "usbredir", "vsock"]);

/** An upgrade refused with the ApiError thrown for it, or a 500 (logged) for anything else. */
export function refuseUpgrade(socket: Duplex, error: unknown): void {
  if (!(error instanceof ApiError)) console.error(`emulator: websocket upgrade failed:`, error);
  rejectUpgrade(socket, error instanceof ApiError ? error : internalError(String(error)));
}

export function createKubevirtSubresources(parts: KubevirtSubresourceParts): KubevirtSubresources {
  async function readOptionalBody(request: IncomingMessage): Promise<unknown> {
    const body = await readBody(request);
    return body.length === 0 ? undefined : decodeBody(body, mediaType(request));
  }

  async function serve(
    request: IncomingMessage,
    response: ServerResponse,
    info: ResourceRequestInfo,
  ): Promise<void> {
    if (info.version !== "v1" && info.version !== "v1alpha3") throw pathNotFound();
    if (
      (info.resource === "version" || info.resource === "healthz") &&
      info.name === "" &&
      info.namespace === ""
    ) {
      if (request.method !== "GET") throw methodNotAllowed();
      return sendJson(
        response,
        200,
        info.resource === "version" ? kubevirtVersionInfo(parts.config) : { status: "ok" },
      );
    }
    if (info.resource === "virtualmachines" && lifecycleActions.has(info.subresource) && info.name !== "") {
      if (request.method !== "PUT") throw methodNotAllowed();
      const options = await readOptionalBody(request);
      changeVmState(parts.registry, info.subresource as LifecycleAction, info.namespace, info.name, options);
      response.writeHead(202);
      response.end();
      return;
    }
    if (
      info.resource === "virtualmachineinstances" &&
      pauseActions.has(info.subresource) &&
      info.name !== ""
    ) {
      if (request.method !== "PUT") throw methodNotAllowed();
      const options = await readOptionalBody(request);
      await parts.pauses.change(info.subresource as PauseAction, info.namespace, info.name, options);
      response.writeHead(200);
      response.end();
      return;
    }
    if (
      info.resource === "virtualmachineinstances" &&
      guestAgentSubresources.has(info.subresource) &&
      info.name !== ""
    ) {
      return serveGuestAgent(parts.registry, parts.guests, request, response, info);
    }
    if (
      info.resource === "virtualmachineinstances" &&
      info.subresource === "vnc/screenshot" &&
      info.name !== ""
    ) {
      return serveScreenshot(parts.registry, parts.guests, request.method ?? "GET", response, info);
    }
    if (streamingSubresources.has(info.subresource)) {
      throw badRequest(
        "websocket: the client is not using the websocket protocol: 'upgrade' token not found in 'Connection' header",
      );
    }
    throw pathNotFound();
  }

  function upgrade(context: UpgradeContext): void {
    try {
      const handler = parts.upgrades.find(context.info);
      if (!handler) return rejectUpgrade(context.socket, pathNotFound());
      // Handlers throw (or reject with) an ApiError for what goes wrong before the handshake.
      Promise.resolve(handler(context)).catch((error: unknown) => refuseUpgrade(context.socket, error));
    } catch (error) {
      refuseUpgrade(context.socket, error);
    }
  }

  return { serve, upgrade };
}
