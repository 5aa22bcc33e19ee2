// POST /api/sessions/:id/restart: KubeVirt's restart subresource. The owner and staff may restart;
// KubeVirt replaces the VMI (same name, new UID) and the console hub follows it by itself. A lab's
// disk is a containerDisk, so whatever was not saved elsewhere is lost: the SPA warns first.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { AuditLog } from "../audit/audit-log.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { requireUser } from "../auth/current-user.ts";
import { HttpError, parseOrThrow } from "../http/errors.ts";
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
  app.post("/api/sessions/:id/restart", async (request, reply) => {
    const user = requireUser(request, deps.loginSessions);
    const { id } = parseOrThrow(RestartParams, request.params);
    const session = await deps.sessions.get(user, id);
    if (session.status !== "running") {
      throw new HttpError(409, "conflict", "Only a running VM can be restarted. Wait until it is running.");
    }
    try {
      await deps.cluster.restartVirtualMachine(id);
    } catch (error) {
      if (error instanceof KubeStatusError && error.statusCode === 409) {
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
