// Errors travel as metav1.Status bodies, worded like the Kubernetes API server words them, because
// clients (kubectl, client-node, our BFF) show or match on those messages.
import type { ServerResponse } from "node:http";

export interface StatusCause {
  /** Left out by errors that have only a message (errors.NewInternalError). */
  reason?: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
}

export interface Status {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure" | "Success";
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

/** What a resource looks like in error messages: `virtualmachines.kubevirt.io`, `secrets`. */
export interface GroupResource {
  group: string;
  plural: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): Status {
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

export function qualifiedResource(resource: GroupResource): string {
  return resource.group === "" ? resource.plural : `${resource.plural}.${resource.group}`;
}

export function notFound(resource: GroupResource, name: string): ApiError {
  return new ApiError(404, "NotFound", `${qualifiedResource(resource)} "${name}" not found`, {
    name,
    group: resource.group,
    kind: resource.plural,
  });
}

export function pathNotFound(): ApiError {
  return new ApiError(404, "NotFound", "the server could not find the requested resource", {});
}

export function alreadyExists(resource: GroupResource, name: string): ApiError {
  return new ApiError(409, "AlreadyExists", `${qualifiedResource(resource)} "${name}" already exists`, {
    name,
    group: resource.group,
    kind: resource.plural,
  });
}

export function conflict(resource: GroupResource, name: string, why: string): ApiError {
  return new ApiError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualifiedResource(resource)} "${name}": ${why}`,
    { name, group: resource.group, kind: resource.plural },
  );
}

export const staleObjectMessage =
  "the object has been modified; please apply your changes to the latest version and try again";

export function badRequest(message: string): ApiError {
  return new ApiError(400, "BadRequest", message);
}

/** 422 with one cause per field, formatted as `Kind.group "name" is invalid: field: message`. */
export function invalid(
  kind: { kind: string; group: string },
  name: string,
  causes: StatusCause[],
  prefix = "",
): ApiError {
  const described = causes.map((cause) => (cause.field ? `${cause.field}: ${cause.message}` : cause.message));
  const joined = described.length === 1 ? described[0] : `[${described.join(", ")}]`;
  const qualifiedKind = kind.group === "" ? kind.kind : `${kind.kind}.${kind.group}`;
  return new ApiError(422, "Invalid", `${prefix}${qualifiedKind} "${name}" is invalid: ${joined}`, {
    name,
    group: kind.group,
    kind: kind.kind,
    causes,
  });
}

export function forbidden(message: string, details?: StatusDetails): ApiError {
  return new ApiError(403, "Forbidden", message, details);
}

export function unauthorized(): ApiError {
  return new ApiError(401, "Unauthorized", "Unauthorized");
}

export function methodNotAllowed(): ApiError {
  return new ApiError(
    405,
    "MethodNotAllowed",
    "the server does not allow this method on the requested resource",
  );
}

export function unsupportedMediaType(contentType: string, supported: string[]): ApiError {
  return new ApiError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format (${contentType || "no content type"}) - accepted media types include: ${supported.join(", ")}`,
  );
}

export function expired(message: string): ApiError {
  return new ApiError(410, "Expired", message);
}

export function internalError(message: string): ApiError {
  return new ApiError(500, "InternalError", `Internal error occurred: ${message}`);
}

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(code, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

export function sendError(res: ServerResponse, error: ApiError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, error.code, error.toStatus());
}
