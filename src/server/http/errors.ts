// One error body for everything the API answers with: { error: { code, message, reason?, params? } }.
// Services' domain errors, cluster and database errors are translated here, so no service knows HTTP
// and no route has to know what a Kubernetes Status or an unusable database looks like.
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import * as z from "zod/mini";
import type { ApiErrorBody } from "../../common/api.ts";
import type { ErrorParams, ErrorReason } from "../../common/error-reasons.ts";
import { DatabaseUnavailableError } from "../db/errors.ts";
import { DomainError, type DomainErrorKind } from "../errors/domain-error.ts";
import { ClusterUnavailableError, KubeStatusError } from "../kube/errors.ts";

/** A refusal of the HTTP layer itself (the Host, CSRF, access), or a domain error on its way out. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly reason?: ErrorReason,
    readonly params?: ErrorParams,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export const unauthenticated = () => new HttpError(401, "unauthenticated", "Sign in first.", "sign_in_first");

const answers: Record<DomainErrorKind, { statusCode: number; code: string }> = {
  invalid: { statusCode: 400, code: "invalid" },
  not_found: { statusCode: 404, code: "not_found" },
  forbidden: { statusCode: 403, code: "forbidden" },
  conflict: { statusCode: 409, code: "conflict" },
  used_up: { statusCode: 409, code: "quota" },
  over_quota: { statusCode: 429, code: "quota" },
  too_soon: { statusCode: 429, code: "rate_limited" },
  no_capacity: { statusCode: 503, code: "capacity" },
  rejected: { statusCode: 422, code: "invalid" },
  unavailable: { statusCode: 503, code: "unavailable" },
};

function fromDomainError(error: DomainError): HttpError {
  const { statusCode, code } = answers[error.kind];
  return new HttpError(statusCode, code, error.message, error.reason, error.params, error.retryAfterSeconds);
}

// zod/mini comes without zod's English messages, and the shared API schemas are zod/mini: a 400 names
// their problems in English all the same.
z.config(z.locales.en());

/** Parse with zod or zod/mini; a failure becomes a 400 naming every bad field. */
export function parseOrThrow<Schema extends z.core.$ZodType>(
  schema: Schema,
  value: unknown,
): z.output<Schema> {
  const parsed = z.safeParse(schema, value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) =>
    issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message,
  );
  throw new HttpError(400, "invalid", problems.join("; "));
}

function toHttpError(error: unknown, request: FastifyRequest): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof DomainError) return fromDomainError(error);
  if (error instanceof ClusterUnavailableError) {
    request.log.warn({ err: error.cause }, "cluster unavailable");
    return new HttpError(503, "cluster_unavailable", error.message);
  }
  if (error instanceof KubeStatusError) return fromKubeStatus(error, request);
  if (error instanceof DatabaseUnavailableError) {
    request.log.error({ err: error.cause ?? error }, "database unavailable");
    return new HttpError(503, error.code, error.message);
  }
  const fastifyError = error as Partial<FastifyError>;
  if (typeof fastifyError.statusCode === "number" && fastifyError.statusCode < 500) {
    // Fastify's own client errors: malformed JSON, wrong content type, body too large.
    return new HttpError(fastifyError.statusCode, "invalid", fastifyError.message ?? "Bad request.");
  }
  request.log.error({ err: error }, "request failed");
  return new HttpError(500, "internal", "Something went wrong on the server.");
}

function fromKubeStatus(error: KubeStatusError, request: FastifyRequest): HttpError {
  const { statusCode, reason } = error;
  if (statusCode === 404) return new HttpError(404, "not_found", "Not found.");
  if (statusCode === 409) return new HttpError(409, "conflict", error.message);
  if (statusCode === 400 || statusCode === 422) {
    // Our own manifests were refused: the lab definition is at fault, and its author needs the reason.
    request.log.warn({ reason, message: error.message }, "cluster rejected an object");
    return new HttpError(422, "invalid", `The cluster rejected the lab's VM: ${error.message}`);
  }
  if (statusCode === 429) {
    return new HttpError(503, "cluster_unavailable", "The cluster is busy. Try again in a moment.");
  }
  if (statusCode === 401 || statusCode === 403) {
    request.log.error(
      { statusCode, reason, message: error.message },
      "cluster refused the console's credentials",
    );
    return new HttpError(
      502,
      "cluster_error",
      "The cluster refused the console's request; an operator must check its permissions.",
    );
  }
  request.log.error({ statusCode, reason, message: error.message }, "cluster request failed");
  return new HttpError(502, "cluster_error", "The cluster could not handle the request. Try again later.");
}

export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { statusCode, code, message, reason, params, retryAfterSeconds } = toHttpError(error, request);
  const body: ApiErrorBody = { error: { code, message } };
  if (reason) body.error.reason = reason;
  if (params && Object.keys(params).length > 0) body.error.params = params;
  if (retryAfterSeconds !== undefined) reply.header("retry-after", String(retryAfterSeconds));
  return reply.status(statusCode).send(body);
}
