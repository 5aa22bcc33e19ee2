// POST /api/sessions/:id/resume: the student (or staff) resumes a session the idle limit paused,
// through KubeVirt's unpause subresource. Only a pause idle handling made is undone here: a VM an
// operator paused stays so.
import type { FastifyInstance } from "fastify";
import { grantedSession, signedInUser } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { DomainError } from "../errors/domain-error.ts";
import type { ClusterClient } from "../kube/client.ts";
import { KubeStatusError } from "../kube/errors.ts";
import { activityPatch, patchMarks } from "./idle-marks.ts";

export function registerResumeRoute(
  app: FastifyInstance,
  deps: {
    cluster: Pick<ClusterClient, "setVmiPaused" | "patchVirtualMachine">;
    audit: AuditLog;
    now: () => Date;
  },
): void {
  app.post("/api/sessions/:id/resume", { config: { access: "session" } }, async (request, reply) => {
    const user = signedInUser(request);
    const session = grantedSession(request);
    if (session.idle?.state !== "paused") {
      throw new DomainError("conflict", "resume_not_paused", "This session is not paused.");
    }
    try {
      await deps.cluster.setVmiPaused(session.id, false);
    } catch (error) {
      // "VMI is not paused": unpaused already (another click, another replica); only the mark is left.
      if (!(
        error instanceof KubeStatusError &&
        error.statusCode === 409 &&
        /not paused/.test(error.message)
      )) {
        throw error;
      }
    }
    // Resuming is activity: the idle limit starts again from now.
    await patchMarks(deps.cluster, session.id, activityPatch(deps.now(), true));
    request.log.info({ sessionId: session.id, by: user.username }, "idle session resumed");
    await deps.audit.record({ action: "idle-resume", actor: user, session }, request);
    const { idle: _resumed, ...resumed } = session;
    return reply.status(202).send(resumed);
  });
}
