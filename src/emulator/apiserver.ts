// The API server's front door: every HTTP request and websocket upgrade is authenticated (bearer
// token), authorized (the configured Authorizer, 403 worded like Kubernetes) and routed to discovery,
// OpenAPI, metrics, SelfSubjectAccessReview, KubeVirt's subresources or the REST handler. It sits at
// the emulator's root beside emulator.ts because it routes to apiserver/ and subresources/ alike, and
// subresources/ is built on apiserver/: inside either folder it would import the folder above it.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { TokenAuthenticator } from "./apiserver/authentication.ts";
import { kubernetesFeatureGates, type ClusterConfig } from "./cluster/cluster-config.ts";
import type { GuestRuntime } from "./guests/guest-runtime.ts";
import type { VmiPauses } from "./subresources/pause.ts";
import { createKubevirtSubresources, refuseUpgrade } from "./subresources/routes.ts";
import {
  apiGroupDocument,
  apiGroupList,
  apiResourceList,
  apiVersions,
  versionInfo,
} from "./apiserver/discovery.ts";
import { decodeBody, mediaType, readBody } from "./http/body.ts";
import { parseRequestInfo, toAttributes } from "./http/request-info.ts";
import {
  ApiError,
  internalError,
  methodNotAllowed,
  pathNotFound,
  sendError,
  sendJson,
  unauthorized,
} from "./http/status.ts";
import { rejectUpgrade, type UpgradeRoutes } from "./http/upgrade.ts";
import type { OpenApiDocuments } from "./apiserver/openapi/openapi.ts";
import type { Authorizer, UserInfo } from "./rbac/attributes.ts";
import { forbiddenStatus } from "./rbac/rbac.ts";
import { reviewSelfSubjectAccess } from "./rbac/self-subject-access-review.ts";
import type { Registry } from "./apiserver/registry.ts";
import { authorizationGroup, subresourcesGroup } from "./cluster/resources.ts";
import type { RestHandler } from "./apiserver/rest.ts";
import { servePodLog } from "./subresources/pod-log.ts";

export interface ApiServerParts {
  config: ClusterConfig;
  authenticator: TokenAuthenticator;
  authorizer: Authorizer;
  registry: Registry;
  rest: RestHandler;
  openapi: OpenApiDocuments;
  upgrades: UpgradeRoutes;
  /** For the guest agent subresources (guestosinfo, userlist, filesystemlist). */
  guests: GuestRuntime;
  /** host:port as clients reach the server, for /api's serverAddressByClientCIDRs. */
  serverAddress: () => string;
  /** virt-api's pause and unpause, and virt-handler's syncs after them. */
  pauses: VmiPauses;
}

function metricsText(config: ClusterConfig): string {
  const version = versionInfo(config);
  const lines = [
    "# HELP kubernetes_build_info [ALPHA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
    "# TYPE kubernetes_build_info gauge",
    `kubernetes_build_info{build_date="${version.buildDate}",compiler="gc",git_commit="${version.gitCommit}",git_tree_state="clean",git_version="${version.gitVersion}",go_version="${version.goVersion}",major="${version.major}",minor="${version.minor}",platform="${version.platform}"} 1`,
    "# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.",
    "# TYPE kubernetes_feature_enabled gauge",
    ...kubernetesFeatureGates(config).map(
      (gate) =>
        `kubernetes_feature_enabled{name="${gate.name}",stage="${gate.stage}"} ${gate.enabled ? 1 : 0}`,
    ),
  ];
  return `${lines.join("\n")}\n`;
}

export function createApiServer(parts: ApiServerParts): {
  onRequest: (request: IncomingMessage, response: ServerResponse) => void;
  onUpgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
} {
  const { config, authenticator, authorizer } = parts;
  const subresources = createKubevirtSubresources(parts);

  /** The writer of a non-resource page, or undefined for an unknown path. */
  function nonResourcePage(url: URL): ((response: ServerResponse) => void) | undefined {
    const path = url.pathname.replace(/\/+$/, "") || "/";
    const segments = path.split("/").filter((segment) => segment !== "");
    const json = (body: unknown) => (response: ServerResponse) => sendJson(response, 200, body);
    if (path === "/api") return json(apiVersions(parts.serverAddress()));
    if (path === "/apis") return json(apiGroupList());
    if (segments[0] === "api" && segments.length === 2) {
      const list = apiResourceList("", segments[1] ?? "");
      if (list) return json(list);
    }
    if (segments[0] === "apis" && segments.length === 2) {
      const group = apiGroupDocument(segments[1] ?? "");
      if (group) return json(group);
    }
    if (segments[0] === "apis" && segments.length === 3) {
      const list = apiResourceList(segments[1] ?? "", segments[2] ?? "");
      if (list) return json(list);
    }
    if (path === "/openapi/v3") return json(parts.openapi.index());
    if (segments[0] === "openapi" && segments[1] === "v3") {
      const document = parts.openapi.document(segments.slice(2).join("/"));
      if (document !== undefined) {
        return (response) => {
          response.writeHead(200, {
            "Content-Type": "application/json",
            "Content-Length": Buffer.byteLength(document),
          });
          response.end(document);
        };
      }
    }
    if (path === "/metrics") {
      return (response) => {
        response.writeHead(200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
        response.end(metricsText(config));
      };
    }
    return undefined;
  }

  // Unknown paths are 404 whatever the method; known ones serve GET only.
  function serveNonResource(request: IncomingMessage, response: ServerResponse, url: URL): void {
    const page = nonResourcePage(url);
    if (!page) throw pathNotFound();
    if (request.method !== "GET" && request.method !== "HEAD") throw methodNotAllowed();
    page(response);
  }

  async function selfSubjectAccessReview(
    request: IncomingMessage,
    response: ServerResponse,
    user: UserInfo,
  ): Promise<void> {
    const body = decodeBody(await readBody(request), mediaType(request));
    const outcome = reviewSelfSubjectAccess(authorizer, user, body);
    if ("review" in outcome) return sendJson(response, 201, outcome.review);
    throw new ApiError(422, "Invalid", outcome.invalid, {
      group: authorizationGroup,
      kind: "SelfSubjectAccessReview",
      causes: [],
    });
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "https://emulator.invalid");
    const method = request.method ?? "GET";
    if (url.pathname === "/version" || url.pathname === "/version/") {
      return sendJson(response, 200, versionInfo(config));
    }
    if (/^\/(healthz|livez|readyz)(\/.*)?$/.test(url.pathname)) {
      response.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
      response.end("ok");
      return;
    }
    const user = authenticator.authenticate(request);
    if (!user) throw unauthorized();
    const info = parseRequestInfo(method, url);
    const attributes = toAttributes(info);
    const decision = authorizer.authorize(user, attributes);
    if (!decision.allowed) return sendJson(response, 403, forbiddenStatus(user, attributes, decision.reason));

    if (info.kind === "nonResource") return serveNonResource(request, response, url);
    if (
      info.group === authorizationGroup &&
      info.resource === "selfsubjectaccessreviews" &&
      info.version === "v1"
    ) {
      if (info.verb !== "create" || info.name !== "") throw methodNotAllowed();
      return selfSubjectAccessReview(request, response, user);
    }
    if (info.group === subresourcesGroup) return subresources.serve(request, response, info);
    if (info.group === "" && info.resource === "pods" && info.subresource === "log" && info.name !== "") {
      return servePodLog(parts.registry, parts.guests, method, response, info, url.searchParams);
    }
    return parts.rest.serve(request, response, info, url, user);
  }

  function onRequest(request: IncomingMessage, response: ServerResponse): void {
    route(request, response).catch((error: unknown) => {
      if (error instanceof ApiError) {
        // Past a body-size refusal the rest of the upload is not worth reading.
        if (error.code === 413) response.setHeader("Connection", "close");
        sendError(response, error);
        return;
      }
      console.error(`emulator: ${request.method} ${request.url} failed:`, error);
      sendError(response, internalError(error instanceof Error ? error.message : String(error)));
    });
  }

  function onUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on("error", () => socket.destroy());
    try {
      const url = new URL(request.url ?? "/", "https://emulator.invalid");
      const user = authenticator.authenticate(request);
      if (!user) return rejectUpgrade(socket, unauthorized());
      const info = parseRequestInfo(request.method ?? "GET", url);
      if (info.kind !== "resource" || info.group !== subresourcesGroup || info.name === "") {
        return rejectUpgrade(socket, pathNotFound());
      }
      const attributes = toAttributes(info);
      const decision = authorizer.authorize(user, attributes);
      if (!decision.allowed) {
        return rejectUpgrade(socket, { code: 403, body: forbiddenStatus(user, attributes, decision.reason) });
      }
      subresources.upgrade({ request, socket, head, info, user });
    } catch (error) {
      refuseUpgrade(socket, error);
    }
  }

  return { onRequest, onUpgrade };
}
