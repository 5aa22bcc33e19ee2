// The grading part of the JSON API between the SPA and the BFF: self-checks, grading runs
// and the grade export. Results inside are the one SessionResult shape of grading.ts.
import * as z from "zod/mini";
import { SessionResult } from "./grading.ts";

/** One "Check my work" of a student: only the lab's self-check checks count in it. */
export const SelfCheck = z.object({
  id: z.number(),
  sessionId: z.string(),
  labId: z.string(),
  owner: z.string(),
  checkedAt: z.string(),
  result: SessionResult,
});
export type SelfCheck = z.output<typeof SelfCheck>;

/** Newest first. */
export const SelfCheckHistory = z.object({ items: z.array(SelfCheck) });
export type SelfCheckHistory = z.output<typeof SelfCheckHistory>;

export const gradingRunStatuses = ["running", "completed", "interrupted"] as const;
export const GradingRunStatus = z.enum(gradingRunStatuses);
export type GradingRunStatus = z.output<typeof GradingRunStatus>;

/** pending: waiting its turn; grading: the agent is being asked now; done: the result is recorded. */
export const GradingItemState = z.enum(["pending", "grading", "done"]);
export type GradingItemState = z.output<typeof GradingItemState>;

export const GradingRunItem = z.object({
  sessionId: z.string(),
  owner: z.string(),
  /** The session's section when the run was started; null in a course without sections. */
  section: z.nullable(z.string()),
  state: GradingItemState,
  /** Set once state is done. */
  result: z.nullable(SessionResult),
});
export type GradingRunItem = z.output<typeof GradingRunItem>;

export const GradingRunProgress = z.object({
  total: z.number(),
  done: z.number(),
  ungradable: z.number(),
});
export type GradingRunProgress = z.output<typeof GradingRunProgress>;

export const GradingRunSummary = z.object({
  id: z.string(),
  labId: z.string(),
  startedBy: z.string(),
  status: GradingRunStatus,
  createdAt: z.string(),
  finishedAt: z.nullable(z.string()),
  /** The sessions the instructor picked; null when the run took every running session of the lab. */
  selectedSessionIds: z.nullable(z.array(z.string())),
  /** The run whose failed and ungradable sessions this run grades again. */
  rerunOf: z.nullable(z.string()),
  progress: GradingRunProgress,
});
export type GradingRunSummary = z.output<typeof GradingRunSummary>;

/** A run with one item per session, in the order they were queued. */
export const GradingRun = z.extend(GradingRunSummary, { items: z.array(GradingRunItem) });
export type GradingRun = z.output<typeof GradingRun>;

/** Newest first. */
export const GradingRunList = z.object({ items: z.array(GradingRunSummary) });
export type GradingRunList = z.output<typeof GradingRunList>;

/** Without sessionIds: every running session of the lab. */
export const StartGradingRunRequest = z.object({
  sessionIds: z.optional(
    z.array(z.string().check(z.minLength(1), z.maxLength(63))).check(z.minLength(1), z.maxLength(1000)),
  ),
});
export type StartGradingRunRequest = z.output<typeof StartGradingRunRequest>;

/** GET /api/labs/:labId/grades.json: each student's latest result (the latest gradable one if any). */
export const LabGrades = z.object({
  labId: z.string(),
  exportedAt: z.string(),
  maxScore: z.number(),
  checks: z.array(z.object({ id: z.string(), title: z.string(), points: z.number() })),
  students: z.array(z.object({ student: z.string(), runId: z.string(), result: SessionResult })),
});
export type LabGrades = z.output<typeof LabGrades>;
