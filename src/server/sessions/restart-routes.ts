// POST /api/sessions/:id/restart: KubeVirt's restart subresource. The owner and staff may restart;
// KubeVirt replaces the VMI (same name, new UID) and the console hub follows it by itself. A lab's
// disk is a containerDisk, so whatever was not saved elsewhere is lost: the SPA warns first.
import type { FastifyInstance } from "fastify";
import { grantedSession, signedInUser } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { DomainError } from "../errors/domain-error.ts";
import { RateLimiter } from "../http/rate-limit.ts";
import type { ClusterClient } from "../kube/client.ts";
import { KubeStatusError } from "../kube/errors.ts";

export function registerRestartRoute(
  app: FastifyInstance,
  deps: {
    cluster: Pick<ClusterClient, "restartVirtualMachine">;
    audit: AuditLog;
  },
): void {
  // Each restart makes KubeVirt build a new VMI (a new pod). Counted per person and VM, like the
  // other per-session throttles, so a student's loop never blocks staff.
  const restarts = new RateLimiter({ burst: 3, refillMs: 20_000 });

  app.post("/api/sessions/:id/restart", { config: { access: "session" } }, async (request, reply) => {
    const user = signedInUser(request);
    const session = grantedSession(request);
    const { id } = session;
    restarts.takeOrRefuse(`${id}/${user.username}`, {
      reason: "restart_too_often",
      message: (seconds) => `You restarted this VM moments ago. Try again in ${seconds} s.`,
    });
    if (session.status !== "running") {
      throw new DomainError(
        "conflict",
        "restart_not_running",
        "Only a running VM can be restarted. Wait until it is running.",
      );
    }
    try {
      await deps.cluster.restartVirtualMachine(id);
    } catch (error) {
      if (isAlreadyStoppingOrStarting(error)) {
        throw new DomainError(
          "conflict",
          "restart_in_progress",
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
