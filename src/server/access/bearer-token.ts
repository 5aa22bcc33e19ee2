// A route behind a bearer token instead of a sign-in (/metrics for Prometheus). Without a token
// configured the route is off: session counts and request rates are not for everyone who can reach
// the console.
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { HttpError } from "../http/errors.ts";

export function checkBearerToken(token: string | undefined) {
  // Compared as hashes so that the comparison takes the same time whatever the length presented.
  const expected = token === undefined ? undefined : digest(token);
  return (request: FastifyRequest, reply: FastifyReply): void => {
    if (expected === undefined) {
      throw new HttpError(404, "not_found", "Metrics are off: set METRICS_TOKEN to turn them on.");
    }
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "")?.[1];
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      reply.header("www-authenticate", 'Bearer realm="lab-console-metrics"');
      throw new HttpError(401, "unauthenticated", "Metrics need the bearer token set in METRICS_TOKEN.");
    }
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
