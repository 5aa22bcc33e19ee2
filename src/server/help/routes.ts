// POST /api/sessions/:id/help (raise, student), POST .../help/acknowledge (staff), DELETE .../help
// (lower, student). Each change is audited.
import type { FastifyInstance } from "fastify";
import { RaiseHandRequest } from "../../common/api.ts";
import { grantedSession, signedInUser } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { parseOrThrow } from "../http/errors.ts";
import { RateLimiter } from "../http/rate-limit.ts";
import type { HelpRequests } from "./help-requests.ts";

export function registerHelpRoutes(
  app: FastifyInstance,
  deps: { help: HelpRequests; audit?: AuditLog },
): void {
  const { help, audit } = deps;
  // Each change is a patch of the VM and an audit row: a hand raised and lowered in a loop would be
  // a write storm. Counted per person and session, so a student's loop never blocks the TA's answer.
  const changes = new RateLimiter({ burst: 5, refillMs: 12_000 });
  const throttle = (id: string, user: { username: string }) =>
    changes.takeOrRefuse(`${id}/${user.username}`, {
      reason: "help_too_often",
      message: (seconds) => `Wait ${seconds} s before changing the raised hand again.`,
    });

  const owner = { config: { access: "session-owner" } } as const;
  const staff = { config: { access: "session-staff" } } as const;

  app.post("/api/sessions/:id/help", owner, async (request) => {
    const user = signedInUser(request);
    const { id } = grantedSession(request);
    throttle(id, user);
    const { note } = parseOrThrow(RaiseHandRequest, request.body ?? {});
    const session = await help.raise(user, id, note);
    await audit?.record({ action: "raise-hand", actor: user, session, details: { note } }, request);
    return session;
  });

  app.post("/api/sessions/:id/help/acknowledge", staff, async (request) => {
    const user = signedInUser(request);
    const { id } = grantedSession(request);
    throttle(id, user);
    const session = await help.acknowledge(user, id);
    await audit?.record({ action: "acknowledge-hand", actor: user, session }, request);
    return session;
  });

  app.delete("/api/sessions/:id/help", owner, async (request) => {
    const user = signedInUser(request);
    const { id } = grantedSession(request);
    throttle(id, user);
    return help.lower(user, id);
  });
}
