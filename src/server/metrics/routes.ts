// GET /metrics for Prometheus, behind a bearer token (METRICS_TOKEN). Without a token configured the
// endpoint is off: session counts and request rates are not for everyone who can reach the console.
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { HttpError } from "../http/errors.ts";
import type { MetricsRegistry } from "./registry.ts";

export function registerMetricsRoute(
  app: FastifyInstance,
  { registry, token }: { registry: MetricsRegistry; token: string | undefined },
): void {
  // Compared as hashes so that the comparison takes the same time whatever the length presented.
  const expected = token === undefined ? undefined : digest(token);
  app.get("/metrics", async (request, reply) => {
    if (expected === undefined) {
      throw new HttpError(404, "not_found", "Metrics are off: set METRICS_TOKEN to turn them on.");
    }
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "")?.[1];
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      reply.header("www-authenticate", 'Bearer realm="lab-console-metrics"');
      throw new HttpError(401, "unauthenticated", "Metrics need the bearer token set in METRICS_TOKEN.");
    }
    return reply
      .header("cache-control", "no-store")
      .type("text/plain; version=0.0.4; charset=utf-8")
      .send(await registry.render());
  });
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
