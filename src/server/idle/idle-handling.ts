// Idle sessions put together (docs/operations.md, "Idle sessions"): console input recorded on the VM
// by the replica holding the console, the idle pass as a duty one replica performs, and the resume
// route. buildApp creates it before the console hub, which reports input to it.
import type { FastifyInstance } from "fastify";
import type { Lab } from "../../common/lab.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import type { AgentClient } from "../agent/client.ts";
import type { ClusterClient } from "../kube/client.ts";
import type { Coordination } from "../replicas/coordination.ts";
import type { SessionSource } from "../sessions/source.ts";
import { AgentActivitySampler } from "./agent-activity.ts";
import { ConsoleActivity } from "./console-activity.ts";
import { IdlePass } from "./idle-pass.ts";
import { registerResumeRoute } from "./resume-route.ts";

export const idleLeaseName = "lab-console-idle";

/** Timings tests shorten; the defaults are the modules' own. */
export interface IdleTiming {
  passIntervalMs?: number;
  activityWriteIntervalMs?: number;
  activeCpuSeconds?: number;
}

export interface IdleHandling {
  /** Input reached the session's VM from one of its consoles on this replica. */
  consoleInput(sessionId: string): void;
}

export function createIdleHandling(
  app: FastifyInstance,
  deps: {
    cluster: ClusterClient;
    source: SessionSource;
    labs: readonly Lab[];
    agents: Pick<AgentClient, "activity">;
    audit: AuditLog;
    coordination: Coordination;
    now: () => Date;
    timing?: IdleTiming;
  },
): IdleHandling {
  const { cluster, source, labs, now, timing = {} } = deps;
  const withLimit = new Set(labs.filter((lab) => lab.session.idle).map((lab) => lab.id));
  const findSession = async (id: string) =>
    (await source.snapshot()).sessions.find((session) => session.id === id);
  const consoles = new ConsoleActivity({
    cluster,
    findSession,
    hasIdleLimit: (labId) => withLimit.has(labId),
    now,
    writeIntervalMs: timing.activityWriteIntervalMs,
    log: app.log,
  });
  const pass = new IdlePass({
    cluster,
    source,
    labs,
    sampler: new AgentActivitySampler({
      agents: deps.agents,
      activeCpuSeconds: timing.activeCpuSeconds,
      log: app.log,
    }),
    audit: deps.audit,
    now,
    intervalMs: timing.passIntervalMs,
    log: app.log,
  });
  registerResumeRoute(app, { cluster, audit: deps.audit, now });
  // No lab with a limit, no pass: nothing to compete for.
  if (withLimit.size > 0) deps.coordination.duty(idleLeaseName).perform(pass);
  return { consoleInput: (id) => consoles.input(id) };
}
