// The run worker: grades runs' pending items in the background, a limited number of sessions at a
// time over all runs, and records each result before anyone is shown it. It picks up the runs a
// previous process left running, and stops at close or when another replica takes over grading;
// the items it was grading then stay pending for whoever grades next, so no result is lost and
// none is recorded twice.
import type { Session } from "../../common/api.ts";
import type { SessionResult } from "../../common/grading.ts";
import type { Lab } from "../../common/lab.ts";
import { DatabaseUnavailableError } from "../db/errors.ts";
import { abortableDelay } from "../agent/abortable-delay.ts";
import type { GradingLabs } from "./grading-labs.ts";
import { createLimiter, type Limiter } from "./limiter.ts";
import type { GradingRepository, ItemResult, RunItemRecord } from "./repository.ts";
import type { GradingLog, SessionGrader } from "./session-grader.ts";

/** Where grading learns which sessions exist and in what state (the BFF's SessionSource fits). */
export interface SessionDirectory {
  snapshot(): Promise<{ sessions: Session[] }>;
}

export interface RunWorkerDeps {
  repository: GradingRepository;
  sessions: SessionDirectory;
  labs: GradingLabs;
  grader: SessionGrader;
  now: () => Date;
  log?: GradingLog;
  /** Sessions graded at the same time, over all runs. Default 8. */
  concurrency?: number;
  /**
   * The pause before trying again when the cluster does not answer at start-up, or the database
   * refuses a result. Default 1 s.
   */
  retryDelayMs?: number;
  /** Called once a session's result is recorded in a run (for metrics and the bench). */
  onItemGraded?: (event: {
    runId: string;
    sessionId: string;
    durationMs: number;
    result: SessionResult;
  }) => void;
}

const recordAttempts = 5;
const goneAfterRestart = "The session ended while the console was restarting, before it was graded.";

export class RunWorker {
  private readonly limit: Limiter;
  private readonly retryDelayMs: number;
  private readonly stopping = new AbortController();
  /** Aborted when this process stops grading runs: at close, or when another replica took over. */
  private runs = new AbortController();
  /** Runs being graded by this process, by id. */
  private readonly active = new Map<string, Promise<void>>();
  /** itemKey() of the items whose agent is being asked right now. */
  private readonly inFlight = new Set<string>();

  constructor(private readonly deps: RunWorkerDeps) {
    this.limit = createLimiter(deps.concurrency ?? 8);
    this.retryDelayMs = deps.retryDelayMs ?? 1000;
  }

  /** Aborted once close() is called; nothing new should start after that. */
  get closing(): AbortSignal {
    return this.stopping.signal;
  }

  /** Whether this process is asking the item's agent right now. */
  isGrading(runId: string, sessionId: string): boolean {
    return this.inFlight.has(itemKey(runId, sessionId));
  }

  /** Grades the run's pending items in the background; a resumed run first drops the sessions gone. */
  launch(runId: string, lab: Lab, kind: "new" | "resumed"): void {
    const signal = this.runs.signal;
    const work = this.gradeRun(runId, lab, kind, signal)
      .catch((error: unknown) => {
        if (signal.aborted) return;
        this.deps.log?.error(
          `Grading run ${runId} stopped: ${describe(error)} It resumes at the next start.`,
        );
      })
      .finally(() => this.active.delete(runId));
    this.active.set(runId, work);
  }

  /**
   * Picks up the runs a previous process left running: their recorded results stay, the rest are
   * graded; sessions that have gone meanwhile get an ungradable result and the run ends
   * "interrupted". Waits for the cluster to answer first.
   */
  async resumeRuns(): Promise<void> {
    const runs = (await this.deps.repository.listRuns({ status: "running" })).reverse();
    for (const run of runs) {
      if (this.active.has(run.id)) continue;
      const lab = this.deps.labs.find(run.labId);
      if (lab) {
        this.deps.log?.info(
          `Resuming grading run ${run.id} (${run.counts.done} of ${run.counts.total} sessions graded).`,
        );
        this.launch(run.id, lab, "resumed");
        continue;
      }
      const pending = (await this.deps.repository.listRunItems(run.id)).filter(
        (item) => item.status === "pending",
      );
      const reason = `The lab "${run.labId}" is no longer configured.`;
      await this.deps.repository.finishRun({
        runId: run.id,
        status: "interrupted",
        finishedAt: this.deps.now().toISOString(),
        closingResults: pending.map((item) => ({
          sessionId: item.sessionId,
          result: this.deps.grader.ungradable(
            { id: run.labId, checks: [] },
            item.sessionId,
            item.owner,
            reason,
          ),
        })),
      });
    }
  }

  /** Resolves when this process has stopped grading the run (finished, or left for the next start). */
  async settled(runId: string): Promise<void> {
    await this.active.get(runId);
  }

  /**
   * Stops grading: agent requests in flight are abandoned and their items stay pending, so the next
   * start grades them (no result is lost, none recorded twice). Does not close the repository.
   */
  async close(): Promise<void> {
    this.stopping.abort(new Error("The grading service is shutting down."));
    this.runs.abort(this.stopping.signal.reason);
    await Promise.allSettled(this.active.values());
  }

  /**
   * Another replica became the grading worker: stops this one's runs as close() does (items in flight
   * stay pending for the worker), while requests and self-checks go on being served here.
   */
  async standDown(): Promise<void> {
    const runs = this.runs;
    this.runs = new AbortController();
    runs.abort(new Error("Another replica took over grading."));
    await Promise.allSettled(this.active.values());
  }

  private async gradeRun(
    runId: string,
    lab: Lab,
    kind: "new" | "resumed",
    signal: AbortSignal,
  ): Promise<void> {
    let pending = (await this.deps.repository.listRunItems(runId)).filter(
      (item) => item.status === "pending",
    );
    const closingResults: ItemResult[] = [];
    if (kind === "resumed") {
      const present = new Set((await this.sessionsOnceAvailable(signal)).map((session) => session.id));
      for (const item of pending.filter((each) => !present.has(each.sessionId))) {
        closingResults.push({
          sessionId: item.sessionId,
          result: this.deps.grader.ungradable(lab, item.sessionId, item.owner, goneAfterRestart),
        });
      }
      pending = pending.filter((item) => present.has(item.sessionId));
    }
    await Promise.all(pending.map((item) => this.limit(() => this.gradeItem(runId, lab, item, signal))));
    if (signal.aborted) return;
    await this.deps.repository.finishRun({
      runId,
      status: closingResults.length > 0 ? "interrupted" : "completed",
      finishedAt: this.deps.now().toISOString(),
      closingResults,
    });
  }

  private async gradeItem(runId: string, lab: Lab, item: RunItemRecord, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const key = itemKey(runId, item.sessionId);
    const started = performance.now();
    this.inFlight.add(key);
    try {
      let result: SessionResult;
      try {
        result = await this.deps.grader.grade(
          lab,
          lab.checks,
          item.sessionId,
          item.owner,
          await this.findSession(item.sessionId),
          signal,
        );
      } catch (error) {
        if (signal.aborted) throw error;
        this.deps.log?.error(`Grading run ${runId}: grading ${item.sessionId} failed: ${describe(error)}`);
        result = this.deps.grader.ungradable(
          lab,
          item.sessionId,
          item.owner,
          "Grading failed inside the console; its log has the details.",
        );
      }
      // Shutting down: this answer may be cut short, so the item waits for the next start instead.
      if (signal.aborted) return;
      const stored = await this.recordPatiently(runId, item.sessionId, result, signal);
      if (stored.result) {
        this.deps.onItemGraded?.({
          runId,
          sessionId: item.sessionId,
          durationMs: performance.now() - started,
          result: stored.result,
        });
      }
    } catch (error) {
      if (signal.aborted) return;
      this.deps.log?.error(
        `Grading run ${runId}: the result for ${item.sessionId} was not recorded: ${describe(error)}`,
      );
    } finally {
      this.inFlight.delete(key);
    }
  }

  /**
   * A result only exists in memory until it is committed: a database that is locked or full for a
   * moment gets a few more chances before the item is left for the next start.
   */
  private async recordPatiently(
    runId: string,
    sessionId: string,
    result: SessionResult,
    signal: AbortSignal,
  ): Promise<RunItemRecord> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.deps.repository.recordResult(runId, sessionId, result)).item;
      } catch (error) {
        if (!(error instanceof DatabaseUnavailableError) || attempt === recordAttempts) throw error;
        this.deps.log?.error(
          `Grading run ${runId}: recording ${sessionId} failed, trying again: ${error.message}`,
        );
        await abortableDelay(this.retryDelayMs, signal);
      }
    }
  }

  /** undefined: the session does not exist; "unknown": the cluster could not be asked. */
  private async findSession(sessionId: string): Promise<Session | undefined | "unknown"> {
    try {
      const { sessions } = await this.deps.sessions.snapshot();
      return sessions.find((session) => session.id === sessionId);
    } catch {
      return "unknown";
    }
  }

  /** Retries until the cluster answers, or the service stops. */
  private async sessionsOnceAvailable(signal: AbortSignal): Promise<Session[]> {
    for (;;) {
      try {
        return (await this.deps.sessions.snapshot()).sessions;
      } catch (error) {
        signal.throwIfAborted();
        this.deps.log?.info(`Waiting for the cluster before resuming grading: ${describe(error)}`);
        await abortableDelay(this.retryDelayMs, signal);
      }
    }
  }
}

function itemKey(runId: string, sessionId: string): string {
  return `${runId}/${sessionId}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
