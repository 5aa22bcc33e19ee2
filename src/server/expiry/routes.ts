// POST /api/sessions/:id/extend: more time for a session (students: their own, up to the lab's limit).
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { Session } from "../../common/api.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { requireUser } from "../auth/current-user.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { parseOrThrow } from "../http/errors.ts";
import type { SessionExtensions } from "./extension.ts";

const SessionParams = z.object({
  id: z
    .string()
    .max(63, "a session id has at most 63 characters")
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "a session id has only lower-case letters, digits and '-'"),
});

export function registerExpiryRoutes(
  app: FastifyInstance,
  deps: {
    extensions: SessionExtensions;
    audit: AuditLog;
    loginSessions: LoginSessions;
    onExtended?: (by: "student" | "staff") => void;
  },
): void {
  app.post("/api/sessions/:id/extend", async (request): Promise<Session> => {
    const user = requireUser(request, deps.loginSessions);
    const { id } = parseOrThrow(SessionParams, request.params);
    const { session, minutes } = await deps.extensions.extend(user, id);
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
  });
}
