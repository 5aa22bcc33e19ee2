// Grades one session against a set of checks, for a self-check and for each item of a run alike. A VM
// that is gone, not running, or whose agent cannot be reached or believed yields `gradable: false`
// with the reason, never a score of zero: a broken VM must not cost a student points.
import type { Session } from "../../common/api.ts";
import { scoreChecks, type SessionResult } from "../../common/grading.ts";
import { type Lab, type LabCheck, labPoints } from "../../common/lab.ts";
import { type AgentClient } from "../agent/client.ts";
import { AgentUnreachableError, AgentUnverifiedError } from "../agent/errors.ts";

export interface GradingLog {
  info(message: string): void;
  error(message: string): void;
}

export interface SessionGraderDeps {
  agents: AgentClient;
  now: () => Date;
  log?: GradingLog;
}

export class SessionGrader {
  constructor(private readonly deps: SessionGraderDeps) {}

  /** `session` undefined: the session does not exist; "unknown": the cluster could not be asked. */
  async grade(
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
        this.deps.log?.info(
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
      gradedAt: this.deps.now().toISOString(),
      gradable: true,
      reason: null,
      score: scored.score,
      checks: scored.checks,
    };
  }

  /** The result that says why a session could not be graded; its maximum is the checks' points. */
  ungradable(
    lab: { id: string; checks: readonly LabCheck[] },
    sessionId: string,
    owner: string,
    reason: string,
  ): SessionResult {
    return {
      sessionId,
      labId: lab.id,
      owner,
      maxScore: labPoints(lab),
      gradedAt: this.deps.now().toISOString(),
      gradable: false,
      reason,
      score: null,
      checks: [],
    };
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
