// Probes. healthz: the process answers. readyz: it can serve real data (cluster reachable, caches in
// sync), so a load balancer only sends people here when their sessions will show.
import type { FastifyInstance } from "fastify";
import { HttpError } from "./http/errors.ts";

export interface Readiness {
  ready: boolean;
  /** Why not, in words an operator can act on. */
  reason: string;
}

export function registerHealthRoutes(app: FastifyInstance, readiness: () => Promise<Readiness>): void {
  app.get("/api/healthz", async () => ({ status: "ok" }));
  app.get("/api/readyz", async () => {
    const { ready, reason } = await readiness();
    if (!ready) throw new HttpError(503, "cluster_unavailable", reason);
    return { status: "ready" };
  });
}
