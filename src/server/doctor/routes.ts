// GET /api/doctor: the same checks as `npm run doctor`, run by the BFF with its own credentials, for
// instructors. One run at a time: a page reloaded in a hurry shares the run in flight.
import type { FastifyInstance } from "fastify";
import type { DoctorReport } from "../../common/operations-api.ts";
import type { WarmPatchRefusalSummary } from "../classes/warm-patch-refusals.ts";
import type { ClusterFacts } from "../kube/cluster-facts.ts";
import { runDoctor } from "./doctor.ts";

export function registerDoctorRoutes(
  app: FastifyInstance,
  deps: {
    facts: ClusterFacts;
    vmNamespace: string;
    leaseNamespace: string | undefined;
    now: () => Date;
    warmPatchRefusals: () => WarmPatchRefusalSummary;
  },
): void {
  let running: Promise<DoctorReport> | undefined;
  app.get(
    "/api/doctor",
    { config: { access: "instructor" } },
    async (_request, reply): Promise<DoctorReport> => {
      running ??= runDoctor(deps.facts, deps).finally(() => {
        running = undefined;
      });
      reply.header("cache-control", "no-store");
      return running;
    },
  );
}
