// The grading API: students check their own work; TAs and instructors read runs and grades;
// instructors start runs. Thin: parse, authorize, call the service, map errors.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Me, Role, Session } from "../../common/api.ts";
import { StartGradingRunRequest, type GradingRunList } from "../../common/grading-api.ts";
import { labIdPattern } from "../../common/lab.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { requireUser } from "../auth/current-user.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { HttpError, parseOrThrow } from "../http/errors.ts";
import { sendWithEtag } from "../http/etag.ts";
import { SelfCheckTooSoonError, type GradingService } from "./service.ts";

export interface GradingRouteDeps {
  grading: GradingService;
  /** The sessions API's rules for who sees which session (SessionService). */
  sessions: { get(user: Me, id: string): Promise<Session> };
  loginSessions: LoginSessions;
  /** Self-checks, runs and exports are recorded here. */
  audit?: AuditLog;
  /** How long each self-check took, and whether it could grade. */
  onSelfChecked?: (durationMs: number, gradable: boolean) => void;
}

const SessionParams = z.object({
  id: z
    .string()
    .max(63, "a session id has at most 63 characters")
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "a session id has only lower-case letters, digits and '-'"),
});
const LabParams = z.object({ labId: z.string().max(40).regex(labIdPattern, "not a lab id") });
const RunParams = z.object({
  runId: z
    .string()
    .max(100)
    .regex(/^[A-Za-z0-9-]+$/, "not a grading run id"),
});

const staff: readonly Role[] = ["ta", "instructor"];
const instructors: readonly Role[] = ["instructor"];

export function registerGradingRoutes(app: FastifyInstance, deps: GradingRouteDeps): void {
  addRoutes(app, deps);
}

function addRoutes(
  app: FastifyInstance,
  { grading, sessions, loginSessions, audit, onSelfChecked }: GradingRouteDeps,
): void {
  const signedIn = (request: FastifyRequest) => requireUser(request, loginSessions);

  app.post("/api/sessions/:id/checks", async (request, reply) => {
    const user = signedIn(request);
    const { id } = parseOrThrow(SessionParams, request.params);
    const session = await sessions.get(user, id);
    if (session.owner !== user.username) {
      throw forbidden("Only the student whose session this is can check its work.");
    }
    try {
      const started = performance.now();
      const check = await grading.selfCheck(session);
      onSelfChecked?.(performance.now() - started, check.result.gradable);
      const { score, gradable } = check.result;
      await audit?.record(
        { action: "self-check", actor: user, session, details: { score, gradable } },
        request,
      );
      return reply.status(201).send(check);
    } catch (error) {
      if (error instanceof SelfCheckTooSoonError)
        reply.header("retry-after", String(error.retryAfterSeconds));
      throw error;
    }
  });

  app.get("/api/sessions/:id/checks", async (request, reply) => {
    const user = signedIn(request);
    const { id } = parseOrThrow(SessionParams, request.params);
    const session = await sessions.get(user, id);
    return sendWithEtag(request, reply, undefined, () => grading.selfCheckHistory(session.id));
  });

  app.post("/api/labs/:labId/grading-runs", async (request, reply) => {
    const user = requireRole(signedIn(request), instructors, "Only instructors can start grading runs.");
    const { labId } = parseOrThrow(LabParams, request.params);
    const { sessionIds } = parseOrThrow(StartGradingRunRequest, request.body ?? {});
    const run = await grading.startRun(labId, user.username, sessionIds);
    await audit?.record({ action: "grading-run", actor: user, labId, details: { runId: run.id } }, request);
    return reply.status(201).send(run);
  });

  app.get("/api/labs/:labId/grading-runs", async (request, reply) => {
    requireRole(signedIn(request), staff, "Only TAs and instructors can see grading runs.");
    const { labId } = parseOrThrow(LabParams, request.params);
    return sendWithEtag(request, reply, undefined, async (): Promise<GradingRunList> => ({
      items: await grading.listRuns(labId),
    }));
  });

  app.get("/api/grading-runs/:runId", async (request, reply) => {
    requireRole(signedIn(request), staff, "Only TAs and instructors can see grading runs.");
    const { runId } = parseOrThrow(RunParams, request.params);
    return sendWithEtag(request, reply, undefined, () => grading.getRun(runId));
  });

  app.post("/api/grading-runs/:runId/rerun", async (request, reply) => {
    const user = requireRole(signedIn(request), instructors, "Only instructors can start grading runs.");
    const { runId } = parseOrThrow(RunParams, request.params);
    const run = await grading.rerun(runId, user.username);
    await audit?.record(
      { action: "grading-run", actor: user, labId: run.labId, details: { runId: run.id, rerunOf: runId } },
      request,
    );
    return reply.status(201).send(run);
  });

  app.get("/api/labs/:labId/grades.csv", async (request, reply) => {
    const user = requireRole(signedIn(request), staff, "Only TAs and instructors can export grades.");
    const { labId } = parseOrThrow(LabParams, request.params);
    const csv = await grading.gradesCsv(labId);
    await audit?.record(
      { action: "export", actor: user, labId, details: { what: "grades", format: "csv" } },
      request,
    );
    return noStore(reply)
      .type("text/csv; charset=utf-8")
      .header("content-disposition", `attachment; filename="${labId}-grades.csv"`)
      .send(csv);
  });

  app.get("/api/labs/:labId/grades.json", async (request, reply) => {
    const user = requireRole(signedIn(request), staff, "Only TAs and instructors can export grades.");
    const { labId } = parseOrThrow(LabParams, request.params);
    const grades = await grading.gradesJson(labId);
    await audit?.record(
      { action: "export", actor: user, labId, details: { what: "grades", format: "json" } },
      request,
    );
    return noStore(reply)
      .header("content-disposition", `attachment; filename="${labId}-grades.json"`)
      .send(grades);
  });
}

function requireRole(user: Me, roles: readonly Role[], message: string): Me {
  if (!roles.includes(user.role)) throw forbidden(message);
  return user;
}

function forbidden(message: string): HttpError {
  return new HttpError(403, "forbidden", message);
}

/** Grades are personal data: no copy in any cache. */
function noStore(reply: FastifyReply): FastifyReply {
  return reply.header("cache-control", "no-store");
}
