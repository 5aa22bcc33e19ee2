// Grading runs as instructors and TAs see them: starting one over a lab's sessions, re-running the
// ones that fell short, reading runs, and exporting the grades they produced. Creating a run only
// records it; the run worker grades it, on whichever replica holds the grading lease. Staff read only
// what of it their sections hold (access/sections.ts): each item keeps its session's section.
import { randomUUID } from "node:crypto";
import type { Me, Session } from "../../common/api.ts";
import type { GradingRun, GradingRunItem, GradingRunSummary, LabGrades } from "../../common/grading-api.ts";
import type { Lab } from "../../common/lab.ts";
import { staffActsOn, staffSections } from "../access/sections.ts";
import { DomainError } from "../errors/domain-error.ts";
import { toGradesCsv, toLabGrades } from "./export.ts";
import type { GradingLabs } from "./grading-labs.ts";
import type { GradingRepository, RunItemRecord, RunRecord } from "./repository.ts";
import type { RunWorker, SessionDirectory } from "./run-worker.ts";

export interface GradingRunsDeps {
  repository: GradingRepository;
  sessions: SessionDirectory;
  labs: GradingLabs;
  worker: Pick<RunWorker, "closing" | "launch" | "isGrading">;
  now: () => Date;
  newRunId?: () => string;
  /**
   * With several replicas, whether this one is the grading worker (it holds the grading lease).
   * Runs started on the others wait for the worker to pick them up. Default: always.
   */
  gradesHere?: () => boolean;
}

/** What a new run grades, and why these sessions. */
type RunPlan = Pick<RunRecord, "selectedSessionIds" | "rerunOf"> & {
  items: { sessionId: string; owner: string; section: string | null }[];
};

export class GradingRuns {
  /** Labs with a run being created right now: two quick clicks must not start two runs. */
  private readonly starting = new Set<string>();

  constructor(private readonly deps: GradingRunsDeps) {}

  /** Grades the chosen sessions of the lab, or every running one; answers at once, grading goes on. */
  async startRun(labId: string, startedBy: string, sessionIds?: string[]): Promise<GradingRun> {
    const lab = this.deps.labs.require(labId);
    return this.creatingRunFor(
      lab,
      async () => {
        const { sessions } = await this.deps.sessions.snapshot();
        const ofLab = new Map(sessions.filter((session) => session.labId === lab.id).map((s) => [s.id, s]));
        let chosen: Session[];
        if (sessionIds) {
          const unique = [...new Set(sessionIds)];
          const unknown = unique.filter((id) => !ofLab.has(id));
          if (unknown.length > 0) {
            throw new DomainError(
              "invalid",
              "not_sessions_of_lab",
              `These are not sessions of "${lab.title}": ${unknown.join(", ")}.`,
              { lab: lab.title, sessions: unknown.join(", ") },
            );
          }
          chosen = unique.map((id) => ofLab.get(id) as Session);
        } else {
          chosen = [...ofLab.values()].filter((session) => session.status === "running");
          if (chosen.length === 0) {
            throw new DomainError(
              "conflict",
              "nothing_running_to_grade",
              `No session of "${lab.title}" is running, so there is nothing to grade.`,
              { lab: lab.title },
            );
          }
        }
        return {
          selectedSessionIds: sessionIds ? chosen.map((session) => session.id) : null,
          rerunOf: null,
          items: chosen.map((session) => ({
            sessionId: session.id,
            owner: session.owner,
            section: session.section,
          })),
        };
      },
      startedBy,
    );
  }

  /** A new run over the finished run's sessions that were ungradable or short of full marks. */
  async rerun(runId: string, startedBy: string): Promise<GradingRun> {
    const previous = await this.requireRun(runId);
    const lab = this.deps.labs.require(previous.labId);
    if (previous.status === "running") {
      throw new DomainError(
        "conflict",
        "run_still_going",
        "This grading run is still going; re-run it once it has finished.",
      );
    }
    const again = (await this.deps.repository.listRunItems(runId)).filter(
      ({ result }) => result !== null && (!result.gradable || result.score < result.maxScore),
    );
    if (again.length === 0) {
      throw new DomainError(
        "conflict",
        "nothing_to_rerun",
        "Every session in this run was graded with full marks; nothing to re-run.",
      );
    }
    return this.creatingRunFor(
      lab,
      async () => ({
        selectedSessionIds: again.map((item) => item.sessionId),
        rerunOf: runId,
        items: again.map(({ sessionId, owner, section }) => ({ sessionId, owner, section })),
      }),
      startedBy,
    );
  }

  /** The run as `viewer` may see it: a run with none of their sections' sessions does not exist for them. */
  async getRun(runId: string, viewer: Me): Promise<GradingRun> {
    const run = await this.requireRun(runId);
    const items = await this.deps.repository.listRunItems(runId);
    if (staffSections(viewer) === "any") return this.runView(run, items);
    const visible = items.filter((item) => staffActsOn(viewer, item.section));
    if (visible.length === 0) throw runNotFound(runId);
    return this.runView({ ...run, counts: countsOf(visible) }, visible);
  }

  /** Newest first; for staff of some sections, the runs that graded any of theirs, counted over those. */
  async listRuns(labId: string, viewer: Me): Promise<GradingRunSummary[]> {
    const runs = await this.deps.repository.listRuns({ labId });
    if (staffSections(viewer) === "any") return runs.map((run) => summarize(run));
    const summaries: GradingRunSummary[] = [];
    for (const run of runs) {
      const items = await this.deps.repository.listRunItems(run.id);
      const visible = items.filter((item) => staffActsOn(viewer, item.section));
      if (visible.length > 0) summaries.push(summarize({ ...run, counts: countsOf(visible) }));
    }
    return summaries;
  }

  async gradesJson(labId: string, viewer: Me): Promise<LabGrades> {
    const lab = this.deps.labs.require(labId);
    return toLabGrades(lab, await this.latestVisibleTo(lab, viewer), this.deps.now().toISOString());
  }

  async gradesCsv(labId: string, viewer: Me): Promise<string> {
    const lab = this.deps.labs.require(labId);
    return toGradesCsv(lab, await this.latestVisibleTo(lab, viewer));
  }

  private async latestVisibleTo(lab: Lab, viewer: Me) {
    const latest = await this.deps.repository.latestResults(lab.id);
    return latest.filter((row) => staffActsOn(viewer, row.section));
  }

  private runView(run: RunRecord, items: RunItemRecord[]): GradingRun {
    return { ...summarize(run), items: items.map((item) => this.itemView(item)) };
  }

  /** Records the planned run, unless the lab has one going, and hands it to the worker. */
  private async creatingRunFor(
    lab: Lab,
    plan: () => Promise<RunPlan>,
    startedBy: string,
  ): Promise<GradingRun> {
    if (this.deps.worker.closing.aborted)
      throw new DomainError("unavailable", "shutting_down", "The console is shutting down.");
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
        createdAt: this.deps.now().toISOString(),
        ...(await plan()),
      });
      if (this.deps.gradesHere?.() ?? true) this.deps.worker.launch(run.id, lab, "new");
      return this.runView(run, await this.deps.repository.listRunItems(run.id));
    } finally {
      this.starting.delete(lab.id);
    }
  }

  private itemView(item: RunItemRecord): GradingRunItem {
    const state =
      item.status === "done"
        ? "done"
        : this.deps.worker.isGrading(item.runId, item.sessionId)
          ? "grading"
          : "pending";
    return {
      sessionId: item.sessionId,
      owner: item.owner,
      section: item.section,
      state,
      result: item.result,
    };
  }

  private async requireRun(runId: string): Promise<RunRecord> {
    const run = await this.deps.repository.getRun(runId);
    if (!run) throw runNotFound(runId);
    return run;
  }
}

function runNotFound(runId: string): DomainError {
  return new DomainError("not_found", "run_not_found", `There is no grading run ${runId}.`, { run: runId });
}

function countsOf(items: RunItemRecord[]): RunRecord["counts"] {
  const done = items.filter((item) => item.result !== null);
  return {
    total: items.length,
    done: done.length,
    ungradable: done.filter((item) => item.result?.gradable === false).length,
  };
}

function summarize(run: RunRecord): GradingRunSummary {
  const { counts, ...rest } = run;
  return { ...rest, progress: counts };
}

function runAlreadyGoing(lab: Lab): DomainError {
  return new DomainError(
    "conflict",
    "run_already_going",
    `A grading run for "${lab.title}" is already going. Wait for it to finish.`,
    { lab: lab.title },
  );
}
