// GET /api/sessions/:id/boot-log: what the VM printed on its serial console so far, whether or not
// anyone was attached (KubeVirt's guest-console-log), so a student sees the boot before the live
// console attaches. A VM whose serial console logging is off has no boot log: that is an answer
// (`logging: "off"`), not an error. The owner and staff may read it; anyone else gets the sessions
// API's 404.
import type { FastifyInstance } from "fastify";
import type { BootLog } from "../../common/api.ts";
import { grantedSession } from "../access/policy.ts";
import type { ClusterClient } from "../kube/client.ts";
import type { SessionSource } from "./source.ts";

export function registerBootLogRoute(
  app: FastifyInstance,
  deps: { source: SessionSource; cluster: Pick<ClusterClient, "readBootLog"> },
): void {
  app.get(
    "/api/sessions/:id/boot-log",
    { config: { access: "session" } },
    async (request): Promise<BootLog> => {
      const { id } = grantedSession(request);
      const { objects } = await deps.source.snapshot();
      // Before KubeVirt created the VMI there is no launcher pod, so nothing was printed yet.
      const vmiUid = objects.get(id)?.vmi?.metadata.uid;
      // Until the launcher pod shows otherwise, logging is what Lab Console's VMs ask for: on.
      return vmiUid ? await deps.cluster.readBootLog(vmiUid) : { lines: [], logging: "on" };
    },
  );
}
