// GET /metrics for Prometheus, behind the bearer token METRICS_TOKEN (access/bearer-token.ts).
import type { FastifyInstance } from "fastify";
import type { MetricsRegistry } from "./registry.ts";

export function registerMetricsRoute(
  app: FastifyInstance,
  { registry }: { registry: MetricsRegistry },
): void {
  app.get("/metrics", { config: { access: "metrics-token" } }, async (_request, reply) =>
    reply
      .header("cache-control", "no-store")
      .type("text/plain; version=0.0.4; charset=utf-8")
      .send(await registry.render()),
  );
}
