// One error body for everything the API answers with: { error: { code, message } }. Cluster and
// database errors are translated here, so no route has to know what a Kubernetes Status or an
// unusable database looks like.
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import * as z from "zod/mini";
import type { ApiErrorBody } from "../../common/api.ts";
import { DatabaseUnavailableError } from "../db/errors.ts";
import { ClusterUnavailableError, KubeStatusError } from "../kube/errors.ts";

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const unauthenticated = () => new HttpError(401, "unauthenticated", "Sign in first.");
export const notFound = (message: string) => new HttpError(404, "not_found", message);
export const invalid = (message: string) => new HttpError(400, "invalid", message);

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
  throw invalid(problems.join("; "));
}

function toHttpError(error: unknown, request: FastifyRequest): HttpError {
  if (error instanceof HttpError) return error;
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
  if (statusCode === 404) return notFound("Not found.");
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
  const httpError = toHttpError(error, request);
  const body: ApiErrorBody = { error: { code: httpError.code, message: httpError.message } };
  return reply.status(httpError.statusCode).send(body);
}
