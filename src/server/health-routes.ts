// Probes. healthz: the process answers. readyz: it can serve real data (cluster reachable, caches in
// sync), so a load balancer only sends people here when their sessions will show.
import type { FastifyInstance } from "fastify";
import { HttpError } from "./http/errors.ts";
import type { Readiness } from "./sessions/reads.ts";

export function registerHealthRoutes(app: FastifyInstance, readiness: () => Promise<Readiness>): void {
  const probe = { config: { access: "public" } } as const;
  app.get("/api/healthz", probe, async () => ({ status: "ok" }));
  app.get("/api/readyz", probe, async () => {
    const { ready, reason } = await readiness();
    if (!ready) throw new HttpError(503, "cluster_unavailable", reason);
    return { status: "ready" };
  });
}
