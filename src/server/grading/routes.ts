// The grading API: students check their own work; TAs and instructors read runs and grades;
// instructors start runs. Thin: parse, call the service (access/policy.ts decided who may call).
import type { FastifyInstance, FastifyReply } from "fastify";
import { StartGradingRunRequest, type GradingRunList } from "../../common/grading-api.ts";
import { grantedSession, signedInUser } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { parseOrThrow } from "../http/errors.ts";
import { LabIdParams, RunIdParams } from "../http/params.ts";
import { sendWithEtag } from "../http/etag.ts";
import type { GradingService } from "./service.ts";

export interface GradingRouteDeps {
  grading: GradingService;
  /** Self-checks, runs and exports are recorded here. */
  audit?: AuditLog;
  /** How long each self-check took, and whether it could grade. */
  onSelfChecked?: (durationMs: number, gradable: boolean) => void;
}

export function registerGradingRoutes(
  app: FastifyInstance,
  { grading, audit, onSelfChecked }: GradingRouteDeps,
): void {
  const owner = { config: { access: "session-owner" } } as const;
  const ownerOrStaff = { config: { access: "session" } } as const;
  const staff = { config: { access: "staff" } } as const;
  const instructor = { config: { access: "instructor" } } as const;

  app.post("/api/sessions/:id/checks", owner, async (request, reply) => {
    const user = signedInUser(request);
    const session = grantedSession(request);
    const started = performance.now();
    const check = await grading.selfCheck(session);
    onSelfChecked?.(performance.now() - started, check.result.gradable);
    const { score, gradable } = check.result;
    await audit?.record(
      { action: "self-check", actor: user, session, details: { score, gradable } },
      request,
    );
    return reply.status(201).send(check);
  });

  app.get("/api/sessions/:id/checks", ownerOrStaff, async (request, reply) => {
    const session = grantedSession(request);
    return sendWithEtag(request, reply, undefined, () => grading.selfCheckHistory(session.id));
  });

  app.post("/api/labs/:labId/grading-runs", instructor, async (request, reply) => {
    const user = signedInUser(request);
    const { labId } = parseOrThrow(LabIdParams, request.params);
    const { sessionIds } = parseOrThrow(StartGradingRunRequest, request.body ?? {});
    const run = await grading.startRun(labId, user.username, sessionIds);
    await audit?.record({ action: "grading-run", actor: user, labId, details: { runId: run.id } }, request);
    return reply.status(201).send(run);
  });

  // What a TA of some sections reads of runs and grades is their sections' (access/sections.ts).
  app.get("/api/labs/:labId/grading-runs", staff, async (request, reply) => {
    const user = signedInUser(request);
    const { labId } = parseOrThrow(LabIdParams, request.params);
    return sendWithEtag(request, reply, undefined, async (): Promise<GradingRunList> => ({
      items: await grading.listRuns(labId, user),
    }));
  });

  app.get("/api/grading-runs/:runId", staff, async (request, reply) => {
    const user = signedInUser(request);
    const { runId } = parseOrThrow(RunIdParams, request.params);
    return sendWithEtag(request, reply, undefined, () => grading.getRun(runId, user));
  });

  app.post("/api/grading-runs/:runId/rerun", instructor, async (request, reply) => {
    const user = signedInUser(request);
    const { runId } = parseOrThrow(RunIdParams, request.params);
    const run = await grading.rerun(runId, user.username);
    await audit?.record(
      { action: "grading-run", actor: user, labId: run.labId, details: { runId: run.id, rerunOf: runId } },
      request,
    );
    return reply.status(201).send(run);
  });

  app.get("/api/labs/:labId/grades.csv", staff, async (request, reply) => {
    const user = signedInUser(request);
    const { labId } = parseOrThrow(LabIdParams, request.params);
    const csv = await grading.gradesCsv(labId, user);
    await audit?.record(
      { action: "export", actor: user, labId, details: { what: "grades", format: "csv" } },
      request,
    );
    return noStore(reply)
      .type("text/csv; charset=utf-8")
      .header("content-disposition", `attachment; filename="${labId}-grades.csv"`)
      .send(csv);
  });

  app.get("/api/labs/:labId/grades.json", staff, async (request, reply) => {
    const user = signedInUser(request);
    const { labId } = parseOrThrow(LabIdParams, request.params);
    const grades = await grading.gradesJson(labId, user);
    await audit?.record(
      { action: "export", actor: user, labId, details: { what: "grades", format: "json" } },
      request,
    );
    return noStore(reply)
      .header("content-disposition", `attachment; filename="${labId}-grades.json"`)
      .send(grades);
  });
}

/** Grades are personal data: no copy in any cache. */
function noStore(reply: FastifyReply): FastifyReply {
  return reply.header("cache-control", "no-store");
}
