// POST /api/sessions/:id/restart: KubeVirt's restart subresource. The owner and staff may restart;
// KubeVirt replaces the VMI (same name, new UID) and the console hub follows it by itself. A lab's
// disk is a containerDisk, so whatever was not saved elsewhere is lost: the SPA warns first.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AuditLog } from "../audit/audit-log.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { requireUser } from "../auth/current-user.ts";
import { HttpError, parseOrThrow } from "../http/errors.ts";
import { RateLimiter } from "../http/rate-limit.ts";
import type { ClusterClient } from "../kube/client.ts";
import { KubeStatusError } from "../kube/errors.ts";
import type { SessionService } from "./service.ts";

const RestartParams = z.object({
  id: z
    .string()
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "a session id has only lower-case letters, digits and '-'"),
});

export function registerRestartRoute(
  app: FastifyInstance,
  deps: {
    sessions: SessionService;
    cluster: Pick<ClusterClient, "restartVirtualMachine">;
    loginSessions: LoginSessions;
    audit: AuditLog;
  },
): void {
  // Each restart makes KubeVirt build a new VMI (a new pod). Counted per person and VM, like the
  // other per-session throttles, so a student's loop never blocks staff.
  const restarts = new RateLimiter({ burst: 3, refillMs: 20_000 });

  app.post("/api/sessions/:id/restart", async (request, reply) => {
    const user = requireUser(request, deps.loginSessions);
    const { id } = parseOrThrow(RestartParams, request.params);
    restarts.takeOrRefuse(
      `${id}/${user.username}`,
      reply,
      (seconds) => `You restarted this VM moments ago. Try again in ${seconds} s.`,
    );
    const session = await deps.sessions.get(user, id);
    if (session.status !== "running") {
      throw new HttpError(409, "conflict", "Only a running VM can be restarted. Wait until it is running.");
    }
    try {
      await deps.cluster.restartVirtualMachine(id);
    } catch (error) {
      if (isAlreadyStoppingOrStarting(error)) {
        throw new HttpError(
          409,
          "conflict",
          "The VM is already stopping or starting. Try again in a moment.",
        );
      }
      throw error;
    }
    request.log.info({ sessionId: id, by: user.username }, "session VM restarted");
    await deps.audit.record({ action: "restart", actor: user, session }, request);
    return reply.status(202).send(session);
  });
}

/**
 * virt-api refuses a restart queued behind another stop/start with a 500 (errors.NewInternalError:
 * "unable to complete request: stop/start already underway", KubeVirt's lifecycle.go), and one that
 * lost a race for the VM's status with a 409. Either way the VM is on its way already.
 */
function isAlreadyStoppingOrStarting(error: unknown): boolean {
  if (!(error instanceof KubeStatusError)) return false;
  if (error.statusCode === 409) return true;
  return error.statusCode === 500 && error.message.includes("stop/start already underway");
}
