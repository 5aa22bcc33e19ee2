// Where grading results are kept. Async throughout so that a Postgres implementation fits the same
// interface; testing/repository-contract.ts holds the tests every implementation must pass.
import type { GradingRunStatus } from "../../common/grading-api.ts";
import type { SessionResult } from "../../common/grading.ts";

export interface NewSelfCheck {
  sessionId: string;
  labId: string;
  owner: string;
  checkedAt: string;
  result: SessionResult;
}

export interface SelfCheckRecord extends NewSelfCheck {
  id: number;
}

export interface NewRun {
  id: string;
  labId: string;
  startedBy: string;
  createdAt: string;
  selectedSessionIds: string[] | null;
  rerunOf: string | null;
  /** In grading order; a session appears once. */
  items: { sessionId: string; owner: string; section?: string | null }[];
}

export interface RunRecord extends Omit<NewRun, "items"> {
  status: GradingRunStatus;
  finishedAt: string | null;
  counts: { total: number; done: number; ungradable: number };
}

export interface RunItemRecord {
  runId: string;
  sessionId: string;
  owner: string;
  /** The session's section when the run was started: who of the staff may see the item. */
  section: string | null;
  status: "pending" | "done";
  result: SessionResult | null;
}

export interface ItemResult {
  sessionId: string;
  result: SessionResult;
}

export interface FinishRun {
  runId: string;
  status: Exclude<GradingRunStatus, "running">;
  finishedAt: string;
  /** Results for items still pending, recorded in the same transaction as the status. */
  closingResults?: ItemResult[];
}

export interface LatestResult {
  runId: string;
  /** The section of the session that result is of. */
  section: string | null;
  result: SessionResult;
}

export interface GradingRepository {
  recordSelfCheck(check: NewSelfCheck): Promise<SelfCheckRecord>;
  /** Newest first. */
  listSelfChecks(sessionId: string, limit: number): Promise<SelfCheckRecord[]>;

  /** The run and all its items (pending) at once, or nothing. */
  createRun(run: NewRun): Promise<RunRecord>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  /** Newest first. */
  listRuns(filter: { labId?: string; status?: GradingRunStatus }): Promise<RunRecord[]>;
  /** In grading order. */
  listRunItems(runId: string): Promise<RunItemRecord[]>;
  /**
   * Records the result of (runId, sessionId), the idempotency key. The first result stands: a
   * second call changes nothing and returns the first with `recorded: false`. Rejects for a
   * session that is not part of the run.
   */
  recordResult(
    runId: string,
    sessionId: string,
    result: SessionResult,
  ): Promise<{ item: RunItemRecord; recorded: boolean }>;
  /**
   * Ends a running run. Rejects, changing nothing, if an item would be left pending: a finished run
   * is never half-recorded. A run that has already finished is returned unchanged.
   */
  finishRun(finish: FinishRun): Promise<RunRecord>;
  /**
   * Each student's latest result for the lab over all runs: the latest gradable one when there is
   * one (an unreachable VM never replaces a grade), else the latest ungradable one.
   */
  latestResults(labId: string): Promise<LatestResult[]>;

  close(): Promise<void>;
}
