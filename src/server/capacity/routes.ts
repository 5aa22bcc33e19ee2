// GET /api/capacity: how many more sessions of each lab fit now, for TAs and instructors.
import type { FastifyInstance } from "fastify";
import type { CapacityReport } from "../../common/operations-api.ts";
import { requireUser } from "../auth/current-user.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { HttpError } from "../http/errors.ts";
import type { CapacityService } from "./capacity-service.ts";

export function registerCapacityRoutes(
  app: FastifyInstance,
  { capacity, loginSessions }: { capacity: CapacityService; loginSessions: LoginSessions },
): void {
  app.get("/api/capacity", async (request, reply): Promise<CapacityReport> => {
    const user = requireUser(request, loginSessions);
    if (user.role === "student")
      throw new HttpError(403, "forbidden", "Only TAs and instructors can see the cluster's capacity.");
    reply.header("cache-control", "no-store");
    return capacity.report();
  });
}
