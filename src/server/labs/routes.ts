// The lab catalogue: what each lab offers, without the check commands.
import type { FastifyInstance } from "fastify";
import type { LabSummary } from "../../common/api.ts";
import type { Lab } from "../../common/lab.ts";
import { toLabSummary } from "./load-labs.ts";

export function registerLabRoutes(app: FastifyInstance, { labs }: { labs: Lab[] }): void {
  const summaries = labs.map(toLabSummary);
  app.get("/api/labs", { config: { access: "signed-in" } }, async (): Promise<LabSummary[]> => summaries);
}
