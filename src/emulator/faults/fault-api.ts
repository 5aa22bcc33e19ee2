// The fault API over HTTP, on the emulator's own port: `POST /emulator/faults/<name>` with a JSON body,
// for tests and tools that drive the emulator as a separate process. Only the admin token may use it
// (403 otherwise); the emulator serves it only when started with faults enabled (else the path is an
// ordinary unknown path: 404).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TokenAuthenticator } from "../apiserver/authentication.ts";
import { PolicyWebhookSchema } from "../cluster/cluster-config.ts";
import type { Connections } from "../http/connections.ts";
import { readBody } from "../http/body.ts";
import {
  ApiError,
  badRequest,
  methodNotAllowed,
  pathNotFound,
  sendError,
  sendJson,
  unauthorized,
} from "../http/status.ts";
import type { UserInfo } from "../rbac/attributes.ts";
import { forbiddenStatus } from "../rbac/rbac.ts";
import type { EmulatorFaults } from "./faults.ts";

export const faultApiPrefix = "/emulator/faults/";

export interface FaultApiParts {
  faults: EmulatorFaults;
  /** drop-connections leaves the caller's own connection open for the answer. */
  connections: Connections;
  authenticator: TokenAuthenticator;
  isAdmin: (user: UserInfo) => boolean;
}

type Body = Record<string, unknown>;

export function isFaultApiRequest(request: IncomingMessage): boolean {
  return (request.url ?? "").startsWith(faultApiPrefix);
}

export function createFaultApi(
  parts: FaultApiParts,
): (request: IncomingMessage, response: ServerResponse) => void {
  const { faults } = parts;
  const operations: Record<
    string,
    (body: Body, request: IncomingMessage, response: ServerResponse) => unknown
  > = {
    "end-watches": () => ({ ended: faults.endWatches() }),
    "compact-history": () => {
      faults.compactHistory();
      return {};
    },
    "drop-connections": (body, request, response) => {
      const forMs = optionalInteger(body, "forMs", 0);
      // The answer goes out on the caller's connection, which then closes like all the others.
      response.setHeader("Connection", "close");
      const { remoteAddress, remotePort } = request.socket;
      return {
        dropped: parts.connections.drop({
          ...(forMs === undefined ? {} : { forMs }),
          keep: { remoteAddress, remotePort },
        }),
      };
    },
    "fail-requests": (body) => {
      const count = requiredInteger(body, "count", 1);
      const status = body.status;
      if (status !== 500 && status !== 429) throw badRequest("status must be 500 or 429");
      const retryAfterSeconds = optionalInteger(body, "retryAfterSeconds", 0);
      faults.failRequests({
        count,
        status,
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      });
      return {};
    },
    "delay-responses": (body) => {
      const ms = requiredInteger(body, "ms", 0);
      const count = optionalInteger(body, "count", 1);
      faults.delayResponses({ ms, ...(count === undefined ? {} : { count }) });
      return {};
    },
    "kill-guest": async (body) => {
      const { namespace, name } = vmiOf(body);
      if (!(await faults.killGuest(namespace, name))) throw missing(namespace, name, "no running guest");
      return {};
    },
    "kill-guest-processes": async (body) => {
      const { namespace, name } = vmiOf(body);
      const { command } = body;
      if (typeof command !== "string" || command === "") throw badRequest("command is required");
      return { killed: await faults.killGuestProcesses(namespace, name, command) };
    },
    "cut-console": (body) => {
      const { namespace, name } = vmiOf(body);
      if (!faults.cutConsole(namespace, name)) throw missing(namespace, name, "no console connection");
      return {};
    },
    "refuse-writes": (body) => {
      const parsed = PolicyWebhookSchema.safeParse(body);
      if (!parsed.success)
        throw badRequest(
          `a webhook: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
        );
      faults.refuseWrites(parsed.data);
      return {};
    },
    reset: () => {
      faults.reset();
      return {};
    },
  };

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const user = parts.authenticator.authenticate(request);
    if (!user) throw unauthorized();
    const path = new URL(request.url ?? "/", "https://emulator.invalid").pathname;
    const method = (request.method ?? "GET").toLowerCase();
    if (!parts.isAdmin(user)) {
      return sendJson(response, 403, forbiddenStatus(user, { kind: "nonResource", verb: method, path }));
    }
    const name = path.slice(faultApiPrefix.length);
    const operation = Object.hasOwn(operations, name) ? operations[name] : undefined;
    if (!operation) throw pathNotFound();
    if (method !== "post") throw methodNotAllowed();
    const body = parseBody(await readBody(request));
    sendJson(response, 200, await operation(body, request, response));
  }

  return (request, response) => {
    serve(request, response).catch((error: unknown) => {
      if (error instanceof ApiError) return sendError(response, error);
      console.error(`emulator: ${request.method} ${request.url} failed:`, error);
      sendError(response, new ApiError(500, "InternalError", String(error)));
    });
  };
}

function parseBody(raw: Buffer): Body {
  if (raw.length === 0) return {};
  let body: unknown;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch (error) {
    throw badRequest(`the body is not JSON: ${(error as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw badRequest("the body must be a JSON object");
  return body as Body;
}

function optionalInteger(body: Body, key: string, minimum: number): number | undefined {
  if (body[key] === undefined) return undefined;
  return requiredInteger(body, key, minimum);
}

function requiredInteger(body: Body, key: string, minimum: number): number {
  const value = body[key];
  if (typeof value !== "number" || !Number.isInteger(value) || value < minimum) {
    throw badRequest(`${key} must be an integer of at least ${minimum}`);
  }
  return value;
}

function vmiOf(body: Body): { namespace: string; name: string } {
  const { namespace, name } = body;
  if (typeof namespace !== "string" || namespace === "" || typeof name !== "string" || name === "") {
    throw badRequest("namespace and name (of the VMI) are required");
  }
  return { namespace, name };
}

function missing(namespace: string, name: string, what: string): ApiError {
  return new ApiError(404, "NotFound", `VMI ${namespace}/${name} does not exist or has ${what}`);
}
