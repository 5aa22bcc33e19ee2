// Scheduled classes put together: the schedule and its routes, the warm pool (a duty of one replica)
// and the claims launches make on it. buildApp creates this before the session service, which asks
// it for a warm VM on every launch.
import type { FastifyInstance } from "fastify";
import type { Lab } from "../../common/lab.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import type { CapacityService } from "../capacity/capacity-service.ts";
import type { AgentClient } from "../agent/client.ts";
import { createAgentDelivery } from "../agent/delivery.ts";
import type { ClusterClient } from "../kube/client.ts";
import type { LabNetworkPolicies } from "../sessions/lab-network-policy.ts";
import type { SessionServiceDeps } from "../sessions/service.ts";
import type { SessionSource } from "../sessions/source.ts";
import { ClassSchedule } from "./class-schedule.ts";
import type { ClassRepository } from "./repository.ts";
import { registerClassRoutes } from "./routes.ts";
import { claimable, WarmClaims } from "./warm-claims.ts";
import { WarmPool, type WarmPoolSettings } from "./warm-pool.ts";
import type { WarmPatchRefusals } from "./warm-patch-refusals.ts";

export interface ScheduledClassesDeps {
  repository: ClassRepository;
  cluster: ClusterClient;
  source: SessionSource;
  labs: Lab[];
  capacity: CapacityService;
  agents: AgentClient;
  /** src/agent/lab_agent/ as one zip (agent/agent-file.ts), delivered into every warm VM with its warm key. */
  agentFile: Buffer;
  warmKeyFor: (vmName: string) => string;
  /** A session's part of the agent's user data, which a claim puts in place of the warm VM's. */
  sessionUserData: (sessionId: string) => string;
  /** Warm-VM patches the cluster refused, not by a lost race: logged, counted, shown by the doctor. */
  refusals: WarmPatchRefusals;
  networkPolicies: LabNetworkPolicies;
  audit: AuditLog;
  now: () => Date;
  log: FastifyInstance["log"];
  settings?: Partial<WarmPoolSettings>;
}

export function createScheduledClasses(deps: ScheduledClassesDeps) {
  const claims = new WarmClaims(deps);
  const pool = new WarmPool({
    ...deps,
    classes: deps.repository,
    agentUserData: createAgentDelivery(deps.agentFile, deps.warmKeyFor),
  });
  const launches: NonNullable<SessionServiceDeps["warm"]> = {
    hasReady: async (labId) => claimable(await deps.source.snapshot(), labId).length > 0,
    claim: (user, lab, expiresAt) => claims.claim(user, lab, expiresAt),
  };
  return {
    /** For the session service: a launch takes a warm VM when one is ready. */
    launches,
    /** The duty's work: one replica keeps the pools. */
    pool,
    register(app: FastifyInstance): void {
      const schedule = new ClassSchedule({ ...deps, classes: deps.repository, timing: pool.settings });
      registerClassRoutes(app, { schedule, audit: deps.audit });
    },
  };
}
