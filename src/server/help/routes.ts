// POST /api/sessions/:id/help (raise, student), POST .../help/acknowledge (staff), DELETE .../help
// (lower, student). Each change is audited.
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import { RaiseHandRequest } from "../../common/api.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { requireUser } from "../auth/current-user.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { parseOrThrow } from "../http/errors.ts";
import { RateLimiter } from "../http/rate-limit.ts";
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
  // Each change is a patch of the VM and an audit row: a hand raised and lowered in a loop would be
  // a write storm. Counted per person and session, so a student's loop never blocks the TA's answer.
  const changes = new RateLimiter({ burst: 5, refillMs: 12_000 });
  const throttle = (id: string, user: { username: string }, reply: FastifyReply) =>
    changes.takeOrRefuse(
      `${id}/${user.username}`,
      reply,
      (seconds) => `Wait ${seconds} s before changing the raised hand again.`,
    );

  app.post("/api/sessions/:id/help", async (request, reply) => {
    const user = requireUser(request, loginSessions);
    const { id } = parseOrThrow(SessionParams, request.params);
    throttle(id, user, reply);
    const { note } = parseOrThrow(RaiseHandRequest, request.body ?? {});
    const session = await help.raise(user, id, note);
    await audit?.record({ action: "raise-hand", actor: user, session, details: { note } }, request);
    return session;
  });

  app.post("/api/sessions/:id/help/acknowledge", async (request, reply) => {
    const user = requireUser(request, loginSessions);
    const { id } = parseOrThrow(SessionParams, request.params);
    throttle(id, user, reply);
    const session = await help.acknowledge(user, id);
    await audit?.record({ action: "acknowledge-hand", actor: user, session }, request);
    return session;
  });

  app.delete("/api/sessions/:id/help", async (request, reply) => {
    const user = requireUser(request, loginSessions);
    const { id } = parseOrThrow(SessionParams, request.params);
    throttle(id, user, reply);
    return help.lower(user, id);
  });
}
