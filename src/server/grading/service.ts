// Grading: students' self-checks and instructors' grading runs. A result is recorded before anyone
// is shown it; an unreachable VM or agent yields `gradable: false`, never a score of zero.
import { randomUUID } from "node:crypto";
import type { Session } from "../../common/api.ts";
import type {
  GradingRun,
  GradingRunItem,
  GradingRunSummary,
  LabGrades,
  SelfCheck,
  SelfCheckHistory,
} from "../../common/grading-api.ts";
import { scoreChecks, type SessionResult } from "../../common/grading.ts";
import type { Lab, LabCheck } from "../../common/lab.ts";
import { DatabaseUnavailableError } from "../db/errors.ts";
import { HttpError, invalid, notFound } from "../http/errors.ts";
import { abortableDelay } from "./abortable-delay.ts";
import { AgentUnreachableError, AgentUnverifiedError, type AgentClient } from "./agent-client.ts";
import { toGradesCsv, toLabGrades } from "./export.ts";
import { createLimiter, type Limiter } from "./limiter.ts";
import type { GradingRepository, ItemResult, RunItemRecord, RunRecord } from "./repository.ts";

/** Where the service learns which sessions exist and in what state (the BFF's SessionSource fits). */
export interface SessionDirectory {
  snapshot(): Promise<{ sessions: Session[] }>;
}

export interface GradingLog {
  info(message: string): void;
  error(message: string): void;
}

export interface GradingServiceDeps {
  repository: GradingRepository;
  sessions: SessionDirectory;
  labs: Lab[];
  agents: AgentClient;
  /** Sessions graded at the same time, over all runs. Default 8. */
  concurrency?: number;
  /** A student may check one session this often. Default 10 s. */
  selfCheckIntervalMs?: number;
  /**
   * The pause before trying again when the cluster does not answer at start-up, or the database
   * refuses a result. Default 1 s.
   */
  retryDelayMs?: number;
  now?: () => Date;
  newRunId?: () => string;
  log?: GradingLog;
  /**
   * With several replicas, whether this one is the grading worker (it holds the grading lease).
   * Runs started on the others wait for the worker to pick them up. Default: always.
   */
  gradesHere?: () => boolean;
  /** Called once a session's result is recorded in a run (for metrics and the bench). */
  onItemGraded?: (event: {
    runId: string;
    sessionId: string;
    durationMs: number;
    result: SessionResult;
  }) => void;
}

export class SelfCheckTooSoonError extends HttpError {
  constructor(readonly retryAfterSeconds: number) {
    super(429, "rate_limited", `You checked this session moments ago. Try again in ${retryAfterSeconds} s.`);
  }
}

const selfCheckHistoryLength = 50;
const recordAttempts = 5;
const goneAfterRestart = "The session ended while the console was restarting, before it was graded.";

export class GradingService {
  private readonly labs: Map<string, Lab>;
  private readonly limit: Limiter;
  private readonly now: () => Date;
  private readonly retryDelayMs: number;
  private readonly stopping = new AbortController();
  /** Aborted when this process stops grading runs: at close, or when another replica took over. */
  private runs = new AbortController();
  /** Runs being graded by this process, by id. */
  private readonly active = new Map<string, Promise<void>>();
  /** `${runId}/${sessionId}` of the items whose agent is being asked right now. */
  private readonly inFlight = new Set<string>();
  /** Labs with a run being created right now: two quick clicks must not start two runs. */
  private readonly starting = new Set<string>();
  /** When each session's last self-check started (ms since epoch). */
  private readonly lastSelfCheck = new Map<string, number>();

  constructor(private readonly deps: GradingServiceDeps) {
    this.labs = new Map(deps.labs.map((lab) => [lab.id, lab]));
    this.limit = createLimiter(deps.concurrency ?? 8);
    this.now = deps.now ?? (() => new Date());
    this.retryDelayMs = deps.retryDelayMs ?? 1000;
  }

  /** Runs the lab's self-check checks on the session and records the outcome. */
  async selfCheck(session: Session): Promise<SelfCheck> {
    const lab = this.requireLab(session.labId);
    const checks = lab.checks.filter((check) => check.selfCheck);
    if (checks.length === 0) {
      throw new HttpError(409, "conflict", `"${lab.title}" has no checks you can run yourself.`);
    }
    this.takeSelfCheckTurn(session.id);
    const result = await this.grade(lab, checks, session.id, session.owner, session, this.stopping.signal);
    return this.deps.repository.recordSelfCheck({
      sessionId: session.id,
      labId: lab.id,
      owner: session.owner,
      checkedAt: result.gradedAt,
      result,
    });
  }

  async selfCheckHistory(sessionId: string): Promise<SelfCheckHistory> {
    return { items: await this.deps.repository.listSelfChecks(sessionId, selfCheckHistoryLength) };
  }

  /** Grades the chosen sessions of the lab, or every running one; answers at once, grading goes on. */
  async startRun(labId: string, startedBy: string, sessionIds?: string[]): Promise<GradingRun> {
    const lab = this.requireLab(labId);
    return this.creatingRunFor(
      lab,
      async () => {
        const { sessions } = await this.deps.sessions.snapshot();
        const ofLab = new Map(sessions.filter((session) => session.labId === lab.id).map((s) => [s.id, s]));
        let chosen: Session[];
        if (sessionIds) {
          const unique = [...new Set(sessionIds)];
          const unknown = unique.filter((id) => !ofLab.has(id));
          if (unknown.length > 0)
            throw invalid(`These are not sessions of "${lab.title}": ${unknown.join(", ")}.`);
          chosen = unique.map((id) => ofLab.get(id) as Session);
        } else {
          chosen = [...ofLab.values()].filter((session) => session.status === "running");
          if (chosen.length === 0) {
            throw new HttpError(
              409,
              "conflict",
              `No session of "${lab.title}" is running, so there is nothing to grade.`,
            );
          }
        }
        return {
          selectedSessionIds: sessionIds ? chosen.map((session) => session.id) : null,
          rerunOf: null,
          items: chosen.map((session) => ({ sessionId: session.id, owner: session.owner })),
        };
      },
      startedBy,
    );
  }

  /** A new run over the finished run's sessions that were ungradable or short of full marks. */
  async rerun(runId: string, startedBy: string): Promise<GradingRun> {
    const previous = await this.requireRun(runId);
    const lab = this.requireLab(previous.labId);
    if (previous.status === "running") {
      throw new HttpError(
        409,
        "conflict",
        "This grading run is still going; re-run it once it has finished.",
      );
    }
    const again = (await this.deps.repository.listRunItems(runId)).filter(
      ({ result }) => result !== null && (!result.gradable || result.score < result.maxScore),
    );
    if (again.length === 0) {
      throw new HttpError(
        409,
        "conflict",
        "Every session in this run was graded with full marks; nothing to re-run.",
      );
    }
    return this.creatingRunFor(
      lab,
      async () => ({
        selectedSessionIds: again.map((item) => item.sessionId),
        rerunOf: runId,
        items: again.map((item) => ({ sessionId: item.sessionId, owner: item.owner })),
      }),
      startedBy,
    );
  }

  async getRun(runId: string): Promise<GradingRun> {
    const run = await this.requireRun(runId);
    const items = await this.deps.repository.listRunItems(runId);
    return { ...this.summarize(run), items: items.map((item) => this.itemView(item)) };
  }

  /** Newest first. */
  async listRuns(labId: string): Promise<GradingRunSummary[]> {
    return (await this.deps.repository.listRuns({ labId })).map((run) => this.summarize(run));
  }

  async gradesJson(labId: string): Promise<LabGrades> {
    const lab = this.requireLab(labId);
    return toLabGrades(lab, await this.deps.repository.latestResults(lab.id), this.now().toISOString());
  }

  async gradesCsv(labId: string): Promise<string> {
    const lab = this.requireLab(labId);
    return toGradesCsv(lab, await this.deps.repository.latestResults(lab.id));
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
      const lab = this.labs.get(run.labId);
      if (lab) {
        this.log(
          "info",
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
        finishedAt: this.now().toISOString(),
        closingResults: pending.map((item) => ({
          sessionId: item.sessionId,
          result: this.ungradable({ id: run.labId, checks: [] }, item.sessionId, item.owner, reason),
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

  private async creatingRunFor(
    lab: Lab,
    plan: () => Promise<
      Pick<RunRecord, "selectedSessionIds" | "rerunOf"> & { items: { sessionId: string; owner: string }[] }
    >,
    startedBy: string,
  ): Promise<GradingRun> {
    if (this.stopping.signal.aborted)
      throw new HttpError(503, "unavailable", "The console is shutting down.");
    if (this.starting.has(lab.id)) throw runAlreadyGoing(lab);
    this.starting.add(lab.id);
    try {
      if ((await this.deps.repository.listRuns({ labId: lab.id, status: "running" })).length > 0) {
        throw runAlreadyGoing(lab);
      }
      const run = await this.deps.repository.createRun({
        id: this.deps.newRunId?.() ?? randomUUID(),
        labId: lab.id,
        startedBy,
        createdAt: this.now().toISOString(),
        ...(await plan()),
      });
      if (this.deps.gradesHere?.() ?? true) this.launch(run.id, lab, "new");
      return await this.getRun(run.id);
    } finally {
      this.starting.delete(lab.id);
    }
  }

  private launch(runId: string, lab: Lab, kind: "new" | "resumed"): void {
    const signal = this.runs.signal;
    const work = this.gradeRun(runId, lab, kind, signal)
      .catch((error: unknown) => {
        if (signal.aborted) return;
        this.log("error", `Grading run ${runId} stopped: ${describe(error)} It resumes at the next start.`);
      })
      .finally(() => this.active.delete(runId));
    this.active.set(runId, work);
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
          result: this.ungradable(lab, item.sessionId, item.owner, goneAfterRestart),
        });
      }
      pending = pending.filter((item) => present.has(item.sessionId));
    }
    await Promise.all(pending.map((item) => this.limit(() => this.gradeItem(runId, lab, item, signal))));
    if (signal.aborted) return;
    await this.deps.repository.finishRun({
      runId,
      status: closingResults.length > 0 ? "interrupted" : "completed",
      finishedAt: this.now().toISOString(),
      closingResults,
    });
  }

  private async gradeItem(runId: string, lab: Lab, item: RunItemRecord, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const key = `${runId}/${item.sessionId}`;
    const started = performance.now();
    this.inFlight.add(key);
    try {
      let result: SessionResult;
      try {
        result = await this.grade(
          lab,
          lab.checks,
          item.sessionId,
          item.owner,
          await this.findSession(item.sessionId),
          signal,
        );
      } catch (error) {
        if (signal.aborted) throw error;
        this.log("error", `Grading run ${runId}: grading ${item.sessionId} failed: ${describe(error)}`);
        result = this.ungradable(
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
      this.log(
        "error",
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
        this.log(
          "error",
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

  private async grade(
    lab: Lab,
    checks: LabCheck[],
    sessionId: string,
    owner: string,
    session: Session | undefined | "unknown",
    signal: AbortSignal,
  ): Promise<SessionResult> {
    const notGradable = (reason: string) => this.ungradable({ id: lab.id, checks }, sessionId, owner, reason);
    if (session === "unknown") return notGradable("The console could not ask the cluster about the VM.");
    if (!session) return notGradable("The session no longer exists: its VM was deleted.");
    if (session.status !== "running") return notGradable(notRunningReason(session));

    let agentResults;
    try {
      agentResults = await this.deps.agents.runChecks(
        sessionId,
        checks.map((check) => ({ id: check.id, run: check.run, timeoutSeconds: check.timeoutSeconds })),
        signal,
      );
    } catch (error) {
      if (!(error instanceof AgentUnreachableError) || signal.aborted) throw error;
      // Worth an operator's look: a changed secret, or something on the port that is not the agent.
      if (error instanceof AgentUnverifiedError) {
        this.log(
          "info",
          `Grading ${sessionId}: an answer (HTTP ${error.status}) did not verify: ${error.message}`,
        );
      }
      return notGradable(error.message);
    }
    let scored;
    try {
      scored = scoreChecks(checks, agentResults);
    } catch (error) {
      return notGradable((error as Error).message);
    }
    return {
      sessionId,
      labId: lab.id,
      owner,
      maxScore: scored.maxScore,
      gradedAt: this.now().toISOString(),
      gradable: true,
      reason: null,
      score: scored.score,
      checks: scored.checks,
    };
  }

  private ungradable(
    lab: { id: string; checks: readonly LabCheck[] },
    sessionId: string,
    owner: string,
    reason: string,
  ): SessionResult {
    return {
      sessionId,
      labId: lab.id,
      owner,
      maxScore: lab.checks.reduce((sum, check) => sum + check.points, 0),
      gradedAt: this.now().toISOString(),
      gradable: false,
      reason,
      score: null,
      checks: [],
    };
  }

  /** Retries until the cluster answers, or the service stops. */
  private async sessionsOnceAvailable(signal: AbortSignal): Promise<Session[]> {
    for (;;) {
      try {
        return (await this.deps.sessions.snapshot()).sessions;
      } catch (error) {
        signal.throwIfAborted();
        this.log("info", `Waiting for the cluster before resuming grading: ${describe(error)}`);
        await abortableDelay(this.retryDelayMs, signal);
      }
    }
  }

  private takeSelfCheckTurn(sessionId: string): void {
    const intervalMs = this.deps.selfCheckIntervalMs ?? 10_000;
    const now = this.now().getTime();
    for (const [id, at] of this.lastSelfCheck) {
      if (now - at >= intervalMs) this.lastSelfCheck.delete(id);
    }
    const last = this.lastSelfCheck.get(sessionId);
    if (last !== undefined)
      throw new SelfCheckTooSoonError(Math.max(1, Math.ceil((last + intervalMs - now) / 1000)));
    this.lastSelfCheck.set(sessionId, now);
  }

  private summarize(run: RunRecord): GradingRunSummary {
    const { counts, ...rest } = run;
    return { ...rest, progress: counts };
  }

  private itemView(item: RunItemRecord): GradingRunItem {
    const state =
      item.status === "done"
        ? "done"
        : this.inFlight.has(`${item.runId}/${item.sessionId}`)
          ? "grading"
          : "pending";
    return { sessionId: item.sessionId, owner: item.owner, state, result: item.result };
  }

  private requireLab(labId: string): Lab {
    const lab = this.labs.get(labId);
    if (!lab) throw notFound(`There is no lab called ${labId}.`);
    return lab;
  }

  private async requireRun(runId: string): Promise<RunRecord> {
    const run = await this.deps.repository.getRun(runId);
    if (!run) throw notFound(`There is no grading run ${runId}.`);
    return run;
  }

  private log(level: keyof GradingLog, message: string): void {
    this.deps.log?.[level](message);
  }
}

function notRunningReason(session: Session): string {
  switch (session.status) {
    case "starting":
      return "The VM is still starting; there is nothing to check yet.";
    case "stopping":
      return "The VM is shutting down.";
    case "failed":
      return session.message ? `The VM failed: ${session.message}` : "The VM failed.";
    default:
      return "The VM is not running.";
  }
}

function runAlreadyGoing(lab: Lab): HttpError {
  return new HttpError(
    409,
    "conflict",
    `A grading run for "${lab.title}" is already going. Wait for it to finish.`,
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
