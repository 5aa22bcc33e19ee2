// GET /api/past-sessions: the signed-in person's own ended sessions (past-sessions.ts). Only ever
// their own, so "signed in" is the whole rule.
import type { FastifyInstance } from "fastify";
import type { PastSessionList } from "../../common/api.ts";
import { signedInUser } from "../access/policy.ts";
import { pastSessionsOf, type PastSessionsDeps } from "./past-sessions.ts";

export function registerPastSessionsRoute(app: FastifyInstance, deps: PastSessionsDeps): void {
  app.get(
    "/api/past-sessions",
    { config: { access: "signed-in" } },
    async (request): Promise<PastSessionList> => pastSessionsOf(signedInUser(request).username, deps),
  );
}
