// GET /api/sessions/:id/boot-log: what the VM printed on its serial console so far, whether or not
// anyone was attached (KubeVirt's guest-console-log), so a student sees the boot before the live
// console attaches. A VM whose serial console logging is off has no boot log: that is an answer
// (`logging: "off"`), not an error. The owner and staff may read it; anyone else gets the sessions
// API's 404.
import type { FastifyInstance } from "fastify";
import type { BootLog } from "../../common/api.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { requireUser } from "../auth/current-user.ts";
import { parseOrThrow } from "../http/errors.ts";
import type { ClusterClient } from "../kube/client.ts";
import type { SessionService } from "./service.ts";
import type { SessionSource } from "./source.ts";
import { z } from "zod";

const BootLogParams = z.object({
  id: z
    .string()
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "a session id has only lower-case letters, digits and '-'"),
});

export function registerBootLogRoute(
  app: FastifyInstance,
  deps: {
    sessions: SessionService;
    source: SessionSource;
    cluster: Pick<ClusterClient, "readBootLog">;
    loginSessions: LoginSessions;
  },
): void {
  app.get("/api/sessions/:id/boot-log", async (request): Promise<BootLog> => {
    const user = requireUser(request, deps.loginSessions);
    const { id } = parseOrThrow(BootLogParams, request.params);
    await deps.sessions.get(user, id);
    const { objects } = await deps.source.snapshot();
    // Before KubeVirt created the VMI there is no launcher pod, so nothing was printed yet.
    const vmiUid = objects.get(id)?.vmi?.metadata.uid;
    // Until the launcher pod shows otherwise, logging is what Lab Console's VMs ask for: on.
    return vmiUid ? await deps.cluster.readBootLog(vmiUid) : { lines: [], logging: "on" };
  });
}
