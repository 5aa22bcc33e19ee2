// A student's self-check: the lab's self-check checks run on their own session, the outcome recorded
// before it is shown. Each session may check once per interval, so pressing the button again and
// again does not pile requests on the VM's agent.
import type { Session } from "../../common/api.ts";
import type { SelfCheck, SelfCheckHistory } from "../../common/grading-api.ts";
import { DomainError, tooSoon } from "../errors/domain-error.ts";
import type { GradingLabs } from "./grading-labs.ts";
import type { GradingRepository, SelfCheckRecord } from "./repository.ts";
import type { SessionGrader } from "./session-grader.ts";

export interface SelfChecksDeps {
  repository: GradingRepository;
  labs: GradingLabs;
  grader: SessionGrader;
  now: () => Date;
  /** A student may check one session this often. Default 10 s. */
  selfCheckIntervalMs?: number;
  /** Aborted when the console shuts down: a self-check still asking an agent is abandoned. */
  closing: AbortSignal;
  /** Told of each recorded self-check (LTI sends it to an LMS when the course's link asks for that). */
  onSelfChecked?: (check: SelfCheckRecord) => void;
}

const selfCheckHistoryLength = 50;

export class SelfChecks {
  /** When each session's last self-check started (ms since epoch). */
  private readonly lastSelfCheck = new Map<string, number>();

  constructor(private readonly deps: SelfChecksDeps) {}

  /** Runs the lab's self-check checks on the session and records the outcome. */
  async selfCheck(session: Session): Promise<SelfCheck> {
    const lab = this.deps.labs.require(session.labId);
    const checks = lab.checks.filter((check) => check.selfCheck);
    if (checks.length === 0) {
      throw new DomainError(
        "conflict",
        "no_self_checks",
        `"${lab.title}" has no checks you can run yourself.`,
        {
          lab: lab.title,
        },
      );
    }
    this.takeSelfCheckTurn(session.id);
    const result = await this.deps.grader.grade(
      lab,
      checks,
      session.id,
      session.owner,
      session,
      this.deps.closing,
    );
    const recorded = await this.deps.repository.recordSelfCheck({
      sessionId: session.id,
      labId: lab.id,
      owner: session.owner,
      checkedAt: result.gradedAt,
      result,
    });
    this.deps.onSelfChecked?.(recorded);
    return recorded;
  }

  async selfCheckHistory(sessionId: string): Promise<SelfCheckHistory> {
    return { items: await this.deps.repository.listSelfChecks(sessionId, selfCheckHistoryLength) };
  }

  private takeSelfCheckTurn(sessionId: string): void {
    const intervalMs = this.deps.selfCheckIntervalMs ?? 10_000;
    const now = this.deps.now().getTime();
    // Turns that are over are forgotten, so the map holds only the sessions checked moments ago.
    for (const [id, at] of this.lastSelfCheck) {
      if (now - at >= intervalMs) this.lastSelfCheck.delete(id);
    }
    const last = this.lastSelfCheck.get(sessionId);
    if (last !== undefined) {
      const seconds = Math.max(1, Math.ceil((last + intervalMs - now) / 1000));
      throw tooSoon(
        "self_check_too_soon",
        seconds,
        `You checked this session moments ago. Try again in ${seconds} s.`,
      );
    }
    this.lastSelfCheck.set(sessionId, now);
  }
}
