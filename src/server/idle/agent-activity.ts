// What the VM's agent sees of the student at work, as idle handling asks it: the student's processes
// used CPU since the last look, or someone logged in on another terminal (ssh) used it since the
// session went quiet. CPU time is a running total, so a first look only sets the baseline; a new
// VMI (a restart) starts from a new one. An agent that cannot be asked, or is older than 2.3.0,
// leaves activity unknown: only console input counts then.
import type { AgentClient } from "../agent/client.ts";

/** CPU seconds the student's processes must use between two looks to count as work. */
export const defaultActiveCpuSeconds = 1;

export type AgentVerdict = "active" | "quiet" | "unknown";

export interface AgentActivityDeps {
  agents: Pick<AgentClient, "activity">;
  activeCpuSeconds?: number;
  log: { debug(object: object, message: string): void };
}

export class AgentActivitySampler {
  private readonly baselines = new Map<string, { vmiUid: string; cpuSeconds: number }>();

  constructor(private readonly deps: AgentActivityDeps) {}

  /** Asks the session's agent; `quietSince` is when the session last showed activity (ms). */
  async look(sessionId: string, vmiUid: string, quietSince: number, now: number): Promise<AgentVerdict> {
    let activity;
    try {
      activity = await this.deps.agents.activity(sessionId, AbortSignal.timeout(10_000));
    } catch (error) {
      this.deps.log.debug({ err: error, sessionId }, "the agent's activity is unknown");
      return "unknown";
    }
    if (!activity) return "unknown";
    const before = this.baselines.get(sessionId);
    this.baselines.set(sessionId, { vmiUid, cpuSeconds: activity.cpuSeconds });
    const threshold = this.deps.activeCpuSeconds ?? defaultActiveCpuSeconds;
    const worked =
      before !== undefined &&
      before.vmiUid === vmiUid &&
      activity.cpuSeconds - before.cpuSeconds >= threshold;
    const quietMs = now - quietSince;
    const typedElsewhere = activity.logins.some((login) => login.idleSeconds * 1000 < quietMs);
    return worked || typedElsewhere ? "active" : "quiet";
  }

  /** Sessions no longer watched (ended, or no longer this replica's duty). */
  keepOnly(sessionIds: ReadonlySet<string>): void {
    for (const id of this.baselines.keys()) if (!sessionIds.has(id)) this.baselines.delete(id);
  }
}
