// What the BFF is built from (buildApp in app.ts): the cluster, the stores, the secrets and the
// settings main.ts reads from the environment; tests and the bench give their own.
import type { FastifyBaseLogger, FastifyServerOptions } from "fastify";
import type { Lab } from "../common/lab.ts";
import type { AnnouncementRepository } from "./announcements/repository.ts";
import type { AuditRepository } from "./audit/repository.ts";
import type { ConnectToAgent } from "./agent/client.ts";
import type { Authenticator } from "./auth/authenticator.ts";
import type { SignIns } from "./auth/sign-ins.ts";
import type { SessionQuotas } from "./capacity/launch-admission.ts";
import type { ClassRepository } from "./classes/repository.ts";
import type { WarmPoolSettings } from "./classes/warm-pool.ts";
import type { ConsoleLimits } from "./console/limits.ts";
import type { GradingRepository } from "./grading/repository.ts";
import type { GradingServiceDeps } from "./grading/service.ts";
import type { TrustedProxies } from "./http/client-address.ts";
import type { ServerLimits } from "./http/server-limits.ts";
import type { IdleTiming } from "./idle/idle-handling.ts";
import type { ClusterClient } from "./kube/client.ts";
import type { ClusterFacts } from "./kube/cluster-facts.ts";
import type { KubeRequestCounter } from "./kube/request-counter.ts";
import type { WriteRate } from "./kube/write-rate.ts";
import type { LtiSettings } from "./lti/register-lti.ts";
import type { RecordingStorage } from "./recordings/recording-storage.ts";
import type { Coordination } from "./replicas/coordination.ts";
import type { SessionsReadMode } from "./sessions/reads.ts";
import type { WallTiming } from "./wall/routes.ts";

export interface AppDeps {
  cluster: ClusterClient;
  sessionsReadMode: SessionsReadMode;
  authenticator: Authenticator;
  signIns: SignIns;
  /** Signs the session cookie. */
  cookieSecret: string;
  labs: Lab[];
  /** Grading results; the caller opens and closes it. */
  gradingRepository: GradingRepository;
  /** Scheduled classes; the caller opens and closes it. */
  classRepository: ClassRepository;
  /** Announcements and their dismissals; the caller opens and closes it. */
  announcementRepository: AnnouncementRepository;
  /** The warm pool's timing and pace (classes/warm-pool.ts); tests shorten them. */
  warmPool?: Partial<WarmPoolSettings>;
  /** The bound the cluster client puts on API writes; launches that would wait too long are refused. */
  writeRate?: WriteRate;
  /**
   * Reaches a session's lab agent. Default: the cluster's port-forward (portforward-transport.ts),
   * with the session's boot log to explain an agent that does not listen.
   */
  connectToAgent?: ConnectToAgent;
  /** Agent keys derive from it (AGENT_TOKEN_SECRET): the same on every replica. */
  agentKeySecret: string;
  /** src/agent/lab_agent/ as one zip (agent/agent-file.ts), delivered into every new VM. */
  agentFile: Buffer;
  /** Defaults: 8 sessions graded at a time, one self-check per session every 10 s. */
  gradingLimits?: Pick<GradingServiceDeps, "concurrency" | "selfCheckIntervalMs">;
  allowedOrigins: string[];
  /** PUBLIC_URL: the address people open; with it, only that name (and loopback) reaches the server. */
  publicUrl?: string;
  /**
   * TRUST_PROXY: the proxies whose X-Forwarded-For, -Proto and -Host are believed, for request.ip,
   * request.protocol and request.host alike; none when absent.
   */
  trustProxy?: TrustedProxies;
  /** Timeouts and connection caps (http/server-limits.ts); defaults for what is not given. */
  serverLimits?: Partial<ServerLimits>;
  /**
   * Where console recordings go (the caller opens and closes it), their size cap and retention; none
   * are recorded when absent.
   */
  recordings?: { storage: RecordingStorage; maxBytes: number; retentionMs: number };
  /** Console timers and limits (console/limits.ts); tests shorten them. */
  consoleLimits?: Partial<ConsoleLimits>;
  /** The class wall's intervals (wall/routes.ts); tests shorten them. */
  wallTiming?: Partial<WallTiming>;
  /** Idle handling's intervals (idle/idle-handling.ts); tests shorten them. */
  idleTiming?: IdleTiming;
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
  /** The clock for expiries, extensions, the reaper and everything dated (tests move it). */
  now?: () => Date;
  /** LTI 1.3 launches, deep linking and grades to LMSs (docs/lti.md); off when absent. */
  lti?: LtiSettings;
  /**
   * How this replica shares the reaper, the grading worker and consoles with the others
   * (docs/scaling.md), built with the app's logger. Default: alone, doing all of it itself.
   */
  coordination?: (log: FastifyBaseLogger) => Coordination;
  /** The built SPA (dist/web); the API alone when absent. */
  webRoot?: string;
  logger?: FastifyServerOptions["logger"];
}
