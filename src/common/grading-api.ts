// The grading part of the JSON API between the SPA and the BFF (issue 6): self-checks, grading runs
// and the grade export. Results inside are the one SessionResult shape of grading.ts.
import { z } from "zod";
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
export type SelfCheck = z.infer<typeof SelfCheck>;

/** Newest first. */
export const SelfCheckHistory = z.object({ items: z.array(SelfCheck) });
export type SelfCheckHistory = z.infer<typeof SelfCheckHistory>;

export const gradingRunStatuses = ["running", "completed", "interrupted"] as const;
export const GradingRunStatus = z.enum(gradingRunStatuses);
export type GradingRunStatus = z.infer<typeof GradingRunStatus>;

/** pending: waiting its turn; grading: the agent is being asked now; done: the result is recorded. */
export const GradingItemState = z.enum(["pending", "grading", "done"]);
export type GradingItemState = z.infer<typeof GradingItemState>;

export const GradingRunItem = z.object({
  sessionId: z.string(),
  owner: z.string(),
  state: GradingItemState,
  /** Set once state is done. */
  result: SessionResult.nullable(),
});
export type GradingRunItem = z.infer<typeof GradingRunItem>;

export const GradingRunProgress = z.object({
  total: z.number(),
  done: z.number(),
  ungradable: z.number(),
});
export type GradingRunProgress = z.infer<typeof GradingRunProgress>;

export const GradingRunSummary = z.object({
  id: z.string(),
  labId: z.string(),
  startedBy: z.string(),
  status: GradingRunStatus,
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  /** The sessions the instructor picked; null when the run took every running session of the lab. */
  selectedSessionIds: z.array(z.string()).nullable(),
  /** The run whose failed and ungradable sessions this run grades again. */
  rerunOf: z.string().nullable(),
  progress: GradingRunProgress,
});
export type GradingRunSummary = z.infer<typeof GradingRunSummary>;

/** A run with one item per session, in the order they were queued. */
export const GradingRun = GradingRunSummary.extend({ items: z.array(GradingRunItem) });
export type GradingRun = z.infer<typeof GradingRun>;

/** Newest first. */
export const GradingRunList = z.object({ items: z.array(GradingRunSummary) });
export type GradingRunList = z.infer<typeof GradingRunList>;

/** Without sessionIds: every running session of the lab. */
export const StartGradingRunRequest = z.object({
  sessionIds: z.array(z.string().min(1).max(63)).min(1).max(1000).optional(),
});
export type StartGradingRunRequest = z.infer<typeof StartGradingRunRequest>;

/** GET /api/labs/:labId/grades.json: each student's latest result (the latest gradable one if any). */
export const LabGrades = z.object({
  labId: z.string(),
  exportedAt: z.string(),
  maxScore: z.number(),
  checks: z.array(z.object({ id: z.string(), title: z.string(), points: z.number() })),
  students: z.array(z.object({ student: z.string(), runId: z.string(), result: SessionResult })),
});
export type LabGrades = z.infer<typeof LabGrades>;
