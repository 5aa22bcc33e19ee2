// Operations put together: launch limits and capacity, extensions and the reaper, the
// audit log, the doctor and /metrics. buildApp creates them before the session service (which asks
// the admission before every launch) and registers their routes after it.
import type { FastifyInstance } from "fastify";
import type { Lab } from "../common/lab.ts";
import { AuditLog } from "./audit/audit-log.ts";
import type { AuditRepository } from "./audit/repository.ts";
import { registerAuditRoutes } from "./audit/routes.ts";
import { CapacityService } from "./capacity/capacity-service.ts";
import { LaunchAdmission, type SessionQuotas } from "./capacity/launch-admission.ts";
import { registerCapacityRoutes } from "./capacity/routes.ts";
import { reaperLeaseName, type Coordination } from "./replicas/coordination.ts";
import type { WarmPatchRefusals } from "./classes/warm-patch-refusals.ts";
import { registerDoctorRoutes } from "./doctor/routes.ts";
import { SessionExtensions } from "./expiry/extension.ts";
import { SessionReaper } from "./expiry/reaper.ts";
import { registerExpiryRoutes } from "./expiry/routes.ts";
import type { ClusterClient } from "./kube/client.ts";
import type { ClusterFacts } from "./kube/cluster-facts.ts";
import type { KubeRequestCounter } from "./kube/request-counter.ts";
import { createAppMetrics, registerLiveMetrics, type AppMetrics } from "./metrics/app-metrics.ts";
import { registerMetricsRoute } from "./metrics/routes.ts";
import type { SessionReads } from "./sessions/reads.ts";
import type { SessionService } from "./sessions/service.ts";

export interface OperationsDeps {
  /** Read-only cluster facts (nodes, KubeVirt CR, access reviews) with the console's own credentials. */
  clusterFacts: ClusterFacts;
  /** The counter the cluster client records into, exported on /metrics. */
  kubeRequests: KubeRequestCounter;
  /** Audit entries; the caller opens and closes it. */
  auditRepository: AuditRepository;
  quotas: SessionQuotas;
  /** /metrics is off without one. */
  metricsToken?: string;
  reaperIntervalMs?: number;
  /** The clock for expiries, extensions and the reaper (tests move it). */
  now?: () => Date;
}

export interface Operations {
  audit: AuditLog;
  metrics: AppMetrics;
  admission: LaunchAdmission;
  capacity: CapacityService;
  now: () => Date;
  /** Registers the routes and starts the reaper (stopped when the app closes). */
  register(context: { sessions: SessionService; warmPatchRefusals: WarmPatchRefusals }): void;
}

export function createOperations(
  app: FastifyInstance,
  deps: OperationsDeps,
  context: { coordination: Coordination; cluster: ClusterClient; reads: SessionReads; labs: Lab[] },
): Operations {
  const now = deps.now ?? (() => new Date());
  const { cluster, reads, labs } = context;
  const metrics = createAppMetrics();
  registerLiveMetrics(metrics, {
    source: reads.source,
    kubeRequests: deps.kubeRequests,
    watchRestarts: () => reads.watchRestarts(),
  });
  const audit = new AuditLog({
    repository: deps.auditRepository,
    now,
    log: app.log,
    onWriteFailed: () => metrics.auditWriteFailures.inc(),
  });
  const capacity = new CapacityService({ facts: deps.clusterFacts, source: reads.source, labs, now });
  const admission = new LaunchAdmission({
    quotas: deps.quotas,
    capacity,
    source: reads.source,
    labs,
    now,
    log: app.log,
    onRefused: (reason) => metrics.launchesRefused.inc({ reason }),
  });
  const reaper = new SessionReaper({
    cluster,
    source: reads.source,
    now,
    intervalMs: deps.reaperIntervalMs,
    log: app.log,
    onReaped: (session) => {
      metrics.sessionsReaped.inc();
      void audit.record({ action: "end", actor: "system", session, details: { reason: "expired" } });
    },
  });

  return {
    audit,
    metrics,
    admission,
    capacity,
    now,
    register({ sessions, warmPatchRefusals }) {
      const extensions = new SessionExtensions({ cluster, source: reads.source, sessions, labs, now });
      registerExpiryRoutes(app, {
        extensions,
        audit,
        onExtended: (by) => metrics.sessionsExtended.inc({ by }),
      });
      registerCapacityRoutes(app, { capacity });
      registerDoctorRoutes(app, {
        facts: deps.clusterFacts,
        vmNamespace: cluster.namespace,
        leaseNamespace: context.coordination.leaseNamespace,
        now,
        warmPatchRefusals: () => warmPatchRefusals.summary(),
      });
      registerAuditRoutes(app, { audit });
      registerMetricsRoute(app, { registry: metrics.registry });
      // One replica reaps at a time; coordination.close() stops it when the app closes.
      context.coordination.duty(reaperLeaseName).perform(reaper);
    },
  };
}
