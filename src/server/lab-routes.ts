// The lab catalogue: what each lab offers, without the check commands.
import type { FastifyInstance } from "fastify";
import type { LabSummary } from "../common/api.ts";
import type { Lab } from "../common/lab.ts";
import { requireUser } from "./auth/current-user.ts";
import type { LoginSessions } from "./auth/login-sessions.ts";
import { toLabSummary } from "./labs/load-labs.ts";

export function registerLabRoutes(
  app: FastifyInstance,
  { labs, loginSessions }: { labs: Lab[]; loginSessions: LoginSessions },
): void {
  const summaries = labs.map(toLabSummary);
  app.get("/api/labs", async (request): Promise<LabSummary[]> => {
    requireUser(request, loginSessions);
    return summaries;
  });
}
