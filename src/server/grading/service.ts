// Grading as the routes and the app use it: one object over students' self-checks, instructors'
// grading runs and the worker that grades them, built from one set of dependencies so callers need
// not know how the jobs are split. It only wires and delegates; each job lives in its own module.
import type { Me, Session } from "../../common/api.ts";
import type {
  GradingRun,
  GradingRunSummary,
  LabGrades,
  SelfCheck,
  SelfCheckHistory,
} from "../../common/grading-api.ts";
import type { Lab } from "../../common/lab.ts";
import { GradingLabs } from "./grading-labs.ts";
import { RunWorker, type RunWorkerDeps } from "./run-worker.ts";
import { GradingRuns, type GradingRunsDeps } from "./runs.ts";
import { SelfChecks, type SelfChecksDeps } from "./self-checks.ts";
import { SessionGrader, type SessionGraderDeps } from "./session-grader.ts";

export interface GradingServiceDeps
  extends
    Pick<RunWorkerDeps, "repository" | "sessions" | "log" | "concurrency" | "retryDelayMs" | "onItemGraded">,
    Pick<GradingRunsDeps, "newRunId" | "gradesHere">,
    Pick<SelfChecksDeps, "selfCheckIntervalMs" | "onSelfChecked">,
    Pick<SessionGraderDeps, "agents"> {
  labs: Lab[];
  now?: () => Date;
}

export class GradingService {
  private readonly selfChecks: SelfChecks;
  private readonly runs: GradingRuns;
  private readonly worker: RunWorker;

  constructor(deps: GradingServiceDeps) {
    const now = deps.now ?? (() => new Date());
    const labs = new GradingLabs(deps.labs);
    const grader = new SessionGrader({ agents: deps.agents, now, log: deps.log });
    this.worker = new RunWorker({
      repository: deps.repository,
      sessions: deps.sessions,
      labs,
      grader,
      now,
      log: deps.log,
      concurrency: deps.concurrency,
      retryDelayMs: deps.retryDelayMs,
      onItemGraded: deps.onItemGraded,
    });
    this.selfChecks = new SelfChecks({
      repository: deps.repository,
      labs,
      grader,
      now,
      selfCheckIntervalMs: deps.selfCheckIntervalMs,
      closing: this.worker.closing,
      onSelfChecked: deps.onSelfChecked,
    });
    this.runs = new GradingRuns({
      repository: deps.repository,
      sessions: deps.sessions,
      labs,
      worker: this.worker,
      now,
      newRunId: deps.newRunId,
      gradesHere: deps.gradesHere,
    });
  }

  selfCheck(session: Session): Promise<SelfCheck> {
    return this.selfChecks.selfCheck(session);
  }

  selfCheckHistory(sessionId: string): Promise<SelfCheckHistory> {
    return this.selfChecks.selfCheckHistory(sessionId);
  }

  startRun(labId: string, startedBy: string, sessionIds?: string[]): Promise<GradingRun> {
    return this.runs.startRun(labId, startedBy, sessionIds);
  }

  rerun(runId: string, startedBy: string): Promise<GradingRun> {
    return this.runs.rerun(runId, startedBy);
  }

  getRun(runId: string, viewer: Me): Promise<GradingRun> {
    return this.runs.getRun(runId, viewer);
  }

  listRuns(labId: string, viewer: Me): Promise<GradingRunSummary[]> {
    return this.runs.listRuns(labId, viewer);
  }

  gradesJson(labId: string, viewer: Me): Promise<LabGrades> {
    return this.runs.gradesJson(labId, viewer);
  }

  gradesCsv(labId: string, viewer: Me): Promise<string> {
    return this.runs.gradesCsv(labId, viewer);
  }

  resumeRuns(): Promise<void> {
    return this.worker.resumeRuns();
  }

  settled(runId: string): Promise<void> {
    return this.worker.settled(runId);
  }

  close(): Promise<void> {
    return this.worker.close();
  }

  standDown(): Promise<void> {
    return this.worker.standDown();
  }
}
