// GET /api/capacity: how many more sessions of each lab fit now, for TAs and instructors.
import type { FastifyInstance } from "fastify";
import type { CapacityReport } from "../../common/operations-api.ts";
import type { CapacityService } from "./capacity-service.ts";

export function registerCapacityRoutes(
  app: FastifyInstance,
  { capacity }: { capacity: CapacityService },
): void {
  app.get(
    "/api/capacity",
    { config: { access: "staff" } },
    async (_request, reply): Promise<CapacityReport> => {
      reply.header("cache-control", "no-store");
      return capacity.report();
    },
  );
}
