// POST /api/sessions/:id/extend: more time for a session (students: their own, up to the lab's limit).
import type { FastifyInstance } from "fastify";
import type { Session } from "../../common/api.ts";
import { grantedSession, signedInUser } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import type { SessionExtensions } from "./extension.ts";

export function registerExpiryRoutes(
  app: FastifyInstance,
  deps: {
    extensions: SessionExtensions;
    audit: AuditLog;
    onExtended?: (by: "student" | "staff") => void;
  },
): void {
  app.post(
    "/api/sessions/:id/extend",
    { config: { access: "session" } },
    async (request): Promise<Session> => {
      const user = signedInUser(request);
      const { session, minutes } = await deps.extensions.extend(user, grantedSession(request).id);
      deps.onExtended?.(user.role === "student" ? "student" : "staff");
      await deps.audit.record(
        {
          action: "extend",
          actor: user,
          session,
          details: { minutes, extensions: session.extensions, expiresAt: session.expiresAt },
        },
        request,
      );
      return session;
    },
  );
}
