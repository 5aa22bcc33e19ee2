// POST /api/sessions/:id/help (raise, student), POST .../help/acknowledge (staff), DELETE .../help
// (lower, student). Each change is audited.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { RaiseHandRequest } from "../../common/api.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { requireUser } from "../auth/current-user.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { parseOrThrow } from "../http/errors.ts";
import type { HelpRequests } from "./help-requests.ts";

const SessionParams = z.object({
  id: z
    .string()
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "a session id has only lower-case letters, digits and '-'"),
});

export function registerHelpRoutes(
  app: FastifyInstance,
  deps: { help: HelpRequests; loginSessions: LoginSessions; audit?: AuditLog },
): void {
  const { help, loginSessions, audit } = deps;

  app.post("/api/sessions/:id/help", async (request) => {
    const user = requireUser(request, loginSessions);
    const { id } = parseOrThrow(SessionParams, request.params);
    const { note } = parseOrThrow(RaiseHandRequest, request.body ?? {});
    const session = await help.raise(user, id, note);
    await audit?.record({ action: "raise-hand", actor: user, session, details: { note } }, request);
    return session;
  });

  app.post("/api/sessions/:id/help/acknowledge", async (request) => {
    const user = requireUser(request, loginSessions);
    const { id } = parseOrThrow(SessionParams, request.params);
    const session = await help.acknowledge(user, id);
    await audit?.record({ action: "acknowledge-hand", actor: user, session }, request);
    return session;
  });

  app.delete("/api/sessions/:id/help", async (request) => {
    const user = requireUser(request, loginSessions);
    const { id } = parseOrThrow(SessionParams, request.params);
    return help.lower(user, id);
  });
}
