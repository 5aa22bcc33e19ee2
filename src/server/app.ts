// Builds the BFF from its dependencies without listening: main.ts listens, tests and the bench
// build it with their own dependencies.
import fastifyCookie from "@fastify/cookie";
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
} from "fastify";
import { Announcements } from "./announcements/announcements.ts";
import type { AnnouncementRepository } from "./announcements/repository.ts";
import { registerAnnouncementRoutes } from "./announcements/routes.ts";
import type { Lab, LabConsole } from "../common/lab.ts";
import { enforceAccess } from "./access/policy.ts";
import type { Authenticator } from "./auth/authenticator.ts";
import { findSignIn } from "./auth/current-user.ts";
import type { SignIns } from "./auth/sign-ins.ts";
import { registerOidcRoutes } from "./auth/oidc/routes.ts";
import { registerAuthRoutes } from "./auth/routes.ts";
import { SignOutCookie } from "./auth/sign-out-cookie.ts";
import { guestSizeThroughAgent } from "./console/guest-size.ts";
import { ConsoleHub } from "./console/hub.ts";
import type { ConsoleLimits } from "./console/limits.ts";
import { ConsolePlacement, registerInternalConsoleRoute } from "./console/placement.ts";
import { registerConsoleRoutes } from "./console/routes.ts";
import { isWebsocketUpgrade } from "./console/websocket-upgrade.ts";
import { soloCoordination, type Coordination } from "./replicas/coordination.ts";
import { gradingLeaseName, gradingWork } from "./replicas/grading-duty.ts";
import type { ConnectToAgent } from "./agent/client.ts";
import { createAgents } from "./agent/agents.ts";
import { createAgentFiles } from "./files/agent-files.ts";
import { createTerminalOpener } from "./terminals/agent-terminal.ts";
import { registerFileRoutes } from "./files/routes.ts";
import type { GradingRepository } from "./grading/repository.ts";
import { registerGradingRoutes } from "./grading/routes.ts";
import { GradingService, type GradingServiceDeps } from "./grading/service.ts";
import { registerHealthRoutes } from "./health-routes.ts";
import { HelpRequests } from "./help/help-requests.ts";
import { registerHelpRoutes } from "./help/routes.ts";
import { trustsProxy, type TrustedProxies } from "./http/client-address.ts";
import { createCsrfGuard } from "./http/csrf.ts";
import { createOwnNames } from "./http/own-names.ts";
import { securityHeaders } from "./http/security-headers.ts";
import { sendError } from "./http/errors.ts";
import {
  defaultServerLimits,
  limitConnections,
  serverOptions,
  type ServerLimits,
} from "./http/server-limits.ts";
import type { ClusterClient } from "./kube/client.ts";
import { createIdleHandling, type IdleTiming } from "./idle/idle-handling.ts";
import { registerLabRoutes } from "./labs/routes.ts";
import { ltiOutboxLeaseName } from "./lti/grades/lti-grades.ts";
import { registerLti, type LtiSettings } from "./lti/register-lti.ts";
import { recordGrading } from "./metrics/app-metrics.ts";
import { createOperations, type OperationsDeps } from "./operations.ts";
import { WarmPatchRefusals } from "./classes/warm-patch-refusals.ts";
import type { RecordingStorage } from "./recordings/recording-storage.ts";
import { RecordingStore } from "./recordings/recording-store.ts";
import { registerRecordingRoutes } from "./recordings/routes.ts";
import { createSessionReads, type SessionsReadMode } from "./sessions/reads.ts";
import { registerBootLogRoute } from "./sessions/boot-log-routes.ts";
import { registerPastSessionsRoute } from "./sessions/past-sessions-routes.ts";
import { registerRestartRoute } from "./sessions/restart-routes.ts";
import { registerSessionRoutes } from "./sessions/routes.ts";
import { LabNetworkPolicies } from "./sessions/lab-network-policy.ts";
import { LaunchGate } from "./sessions/launch-gate.ts";
import { SessionService } from "./sessions/service.ts";
import { registerWeb } from "./spa/static.ts";
import type { ClassRepository } from "./classes/repository.ts";
import { createScheduledClasses } from "./classes/scheduled-classes.ts";
import type { WarmPoolSettings } from "./classes/warm-pool.ts";
import type { WriteRate } from "./kube/write-rate.ts";
import { ConsoleInputTimes } from "./wall/last-input.ts";
import { registerWallRoutes, type WallTiming } from "./wall/routes.ts";

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
   * Reaches a session's lab agent. Default: the cluster's port-forward (agent/portforward-transport.ts),
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
  /** Limits, capacity, expiry, audit, doctor and metrics. */
  operations: OperationsDeps;
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

declare module "fastify" {
  interface FastifyInstance {
    /** This replica's part among the others; start.ts announces it once listening. */
    coordination: Coordination;
  }
}

/** The warm pool's duty: one replica boots, readies and deletes scheduled classes' warm VMs. */
const warmPoolLeaseName = "lab-console-warm-pool";
/** How soon the grading worker notices a run started on another replica. */
const gradingPollMs = 2_000;
/** How often recordings past their retention are removed. */
const recordingSweepMs = 3_600_000;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const isProxy = trustsProxy(deps.trustProxy);
  const serverLimits = { ...defaultServerLimits, ...deps.serverLimits };
  // Browsers poll every few seconds: per-request log lines would drown everything else.
  const app = Fastify({
    logger: deps.logger ?? false,
    trustProxy: deps.trustProxy === undefined ? false : isProxy,
    ...serverOptions(serverLimits),
    logController: new LogController({ disableRequestLogging: true }),
  });
  await app.register(fastifyCookie, { secret: deps.cookieSecret });

  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  const ownNames = createOwnNames({ publicUrl: deps.publicUrl, allowedOrigins: deps.allowedOrigins });
  app.addHook("onRequest", ownNames.hostGuard);
  app.addHook("onRequest", createCsrfGuard(ownNames));
  app.addHook("onSend", securityHeaders);
  const { signIns } = deps;
  // Before any route: each one is checked for a rule as it is added.
  enforceAccess(app, {
    signIn: (request) => findSignIn(request, signIns),
    session: (user, id) => sessions.get(user, id),
    isUpgrade: isWebsocketUpgrade,
    ownNames,
    metricsToken: deps.operations.metricsToken,
    forwardSecret: deps.cookieSecret,
  });

  const reads = createSessionReads(deps.cluster, deps.sessionsReadMode, app.log);
  const coordination = deps.coordination?.(app.log) ?? soloCoordination();
  app.decorate("coordination", coordination);
  const operations = createOperations(app, deps.operations, {
    coordination,
    cluster: deps.cluster,
    reads,
    labs: deps.labs,
  });
  limitConnections(app, serverLimits, {
    isProxy: (address) => isProxy(address, 0),
    onRefused: (reason) => operations.metrics.connectionsRefused.inc({ reason }),
    log: app.log,
  });
  const {
    client: agents,
    connect: connectToAgent,
    keyFor: agentKeyFor,
    warmKeyFor,
    sessionUserData,
  } = createAgents({
    keySecret: deps.agentKeySecret,
    agentFile: deps.agentFile,
    connect: deps.connectToAgent,
    portForward: deps.cluster.portForward,
    readBootLog: async (sessionId) => {
      // As the boot log route finds it: before KubeVirt created the VMI nothing was printed.
      const vmiUid = (await reads.source.snapshot()).objects.get(sessionId)?.vmi?.metadata.uid;
      return vmiUid ? (await deps.cluster.readBootLog(vmiUid)).lines : [];
    },
  });
  const networkPolicies = new LabNetworkPolicies({ cluster: deps.cluster, labs: deps.labs, log: app.log });
  const warmPatchRefusals = new WarmPatchRefusals({
    counter: operations.metrics.warmPatchRefusals,
    now: operations.now,
    log: app.log,
  });
  const classes = createScheduledClasses({
    repository: deps.classRepository,
    cluster: deps.cluster,
    source: reads.source,
    labs: deps.labs,
    capacity: operations.capacity,
    agents,
    agentFile: deps.agentFile,
    warmKeyFor,
    sessionUserData,
    refusals: warmPatchRefusals,
    networkPolicies,
    audit: operations.audit,
    now: operations.now,
    log: app.log,
    settings: deps.warmPool,
  });
  const sessions = new SessionService({
    cluster: deps.cluster,
    source: reads.source,
    labs: deps.labs,
    agentUserData: sessionUserData,
    admission: operations.admission,
    networkPolicies,
    warm: classes.launches,
    gate: deps.writeRate && new LaunchGate(deps.writeRate.limits),
    now: operations.now,
  });
  const signOutCookie = new SignOutCookie(deps.cookieSecret);
  // Before grading: LTI's outbox hears of every graded item and self-check.
  const lti =
    deps.lti &&
    (await registerLti(app, deps.lti, {
      signIns,
      signOutCookie,
      audit: operations.audit,
      labs: deps.labs,
      gradingRepository: deps.gradingRepository,
      secret: deps.cookieSecret,
      now: operations.now,
    }));
  const gradingDuty = coordination.duty(gradingLeaseName);
  const grading = new GradingService({
    gradesHere: () => gradingDuty.held,
    repository: deps.gradingRepository,
    sessions: reads.source,
    labs: deps.labs,
    log: app.log,
    agents,
    now: operations.now,
    onItemGraded: ({ runId, sessionId, durationMs, result }) => {
      recordGrading(operations.metrics, "run", durationMs, result.gradable);
      lti?.runItemGraded({
        runId,
        labId: result.labId,
        sessionId,
        owner: result.owner,
        result,
        gradedAt: result.gradedAt,
      });
    },
    onSelfChecked: (check) => lti?.selfChecked(check),
    ...deps.gradingLimits,
  });

  registerHealthRoutes(app, () => reads.readiness());
  registerAuthRoutes(app, {
    authenticator: deps.authenticator,
    signIns,
    audit: operations.audit,
    signOutCookie,
    now: () => operations.now().getTime(),
  });
  if (deps.authenticator.mode === "oidc") {
    registerOidcRoutes(app, {
      authenticator: deps.authenticator,
      signIns,
      audit: operations.audit,
      signOutCookie,
    });
  }
  registerLabRoutes(app, { labs: deps.labs });
  classes.register(app);
  registerSessionRoutes(app, { sessions, audit: operations.audit });
  registerRestartRoute(app, { cluster: deps.cluster, audit: operations.audit });
  registerBootLogRoute(app, { source: reads.source, cluster: deps.cluster });
  registerPastSessionsRoute(app, {
    audit: operations.audit,
    lastSelfCheck: async (sessionId) => (await deps.gradingRepository.listSelfChecks(sessionId, 1))[0],
    liveSessionIds: async () =>
      new Set((await reads.source.snapshot()).sessions.map((session) => session.id)),
  });
  operations.register({ sessions, warmPatchRefusals });
  const findSession = async (id: string) =>
    (await reads.source.snapshot()).sessions.find((session) => session.id === id);
  const recordings =
    deps.recordings &&
    new RecordingStore({
      ...deps.recordings,
      sessionOf: findSession,
      log: app.log,
    });
  if (recordings) {
    registerRecordingRoutes(app, { recordings });
    const stopSweeping = recordings.sweepEvery(recordingSweepMs);
    app.addHook("onClose", async () => stopSweeping());
  }
  // Idle sessions: console input is written on the VM, one replica decides (idle/idle-handling.ts).
  const idle = createIdleHandling(app, {
    cluster: deps.cluster,
    source: reads.source,
    labs: deps.labs,
    agents,
    audit: operations.audit,
    coordination,
    now: operations.now,
    timing: deps.idleTiming,
  });
  const inputTimes = new ConsoleInputTimes(operations.now);
  const consolesOfLab = (labId: string): readonly LabConsole[] =>
    deps.labs.find((lab) => lab.id === labId)?.session.consoles ?? ["serial"];
  const consoles: ConsoleHub = new ConsoleHub({
    connect: deps.cluster.openConsole,
    connectScreen: deps.cluster.openScreen,
    setGuestSize: guestSizeThroughAgent(agents),
    openTerminal: createTerminalOpener({ connect: connectToAgent, keyFor: agentKeyFor }),
    findSession,
    log: app.log,
    limits: deps.consoleLimits,
    recordings,
    onClosed: (id) => void coordination.consoles.release(id, () => consoles.has(id)),
    onUpstreamReconnected: () => operations.metrics.consoleUpstreamReconnects.inc(),
    onInput: (sessionId) => {
      inputTimes.heard(sessionId);
      idle.consoleInput(sessionId);
    },
    audit: operations.audit,
    readConsoleLog: async (sessionId, bounds, signal) => {
      // As the boot log route finds it: before KubeVirt created the VMI nothing was printed.
      const vmiUid = (await reads.source.snapshot()).objects.get(sessionId)?.vmi?.metadata.uid;
      return vmiUid ? deps.cluster.readConsoleLog(vmiUid, bounds, signal) : { logging: "on", text: "" };
    },
  });
  // One connection per VM across replicas: each browser goes to the replica holding the VM's console.
  coordination.consoles.onLost(() => consoles.letGo());
  const consolePlacement = new ConsolePlacement({
    ownership: coordination.consoles,
    hub: consoles,
    secret: deps.cookieSecret,
    log: app.log,
  });
  if (coordination.replicated) {
    registerInternalConsoleRoute(app, {
      ownership: coordination.consoles,
      hub: consoles,
      secret: deps.cookieSecret,
      maxFrameBytes: consoles.limits.maxFrameBytes,
    });
  }
  registerConsoleRoutes(app, {
    hub: consoles,
    placement: consolePlacement,
    signIns,
    audit: operations.audit,
    onViewers: (change, as) => operations.metrics.consoleViewers.inc({ role: as }, change),
    terminalsOf: (labId) => deps.labs.find((lab) => lab.id === labId)?.session.terminals ?? 0,
    offersScreen: (labId) => consolesOfLab(labId).includes("graphical"),
  });
  registerHelpRoutes(app, {
    help: new HelpRequests({ cluster: deps.cluster, sessions, source: reads.source, now: operations.now }),
    audit: operations.audit,
  });
  registerWallRoutes(app, {
    consoles: {
      // Only where this replica holds (or may take) the console: a second connection would kick it.
      keepOpen: (session) =>
        coordination.consoles
          .claim(session.id, (home) =>
            home.kind === "here" ? consoles.keepShownOpen(session, consolesOfLab(session.labId)) : undefined,
          )
          .catch(() => undefined),
      isOpen: (id) => consoles.has(id),
      screenOf: (id) => consoles.screenOf(id),
      thumbnailOf: (id) => consoles.thumbnailOf(id),
    },
    sessions,
    labIds: new Set(deps.labs.map((lab) => lab.id)),
    signIns,
    lastScore: async (id) => {
      const [latest] = await deps.gradingRepository.listSelfChecks(id, 1);
      return latest?.result.gradable ? latest.result.score : null;
    },
    lastInputs: async (ids) => inputTimes.lastInputs(ids, await reads.source.snapshot()),
    onSearched: (durationMs) => operations.metrics.wallSearchDuration.observe({}, durationMs / 1000),
    audit: operations.audit,
    timing: deps.wallTiming,
  });
  registerAnnouncementRoutes(app, {
    announcements: new Announcements({
      repository: deps.announcementRepository,
      classes: deps.classRepository,
      labIds: new Set(deps.labs.map((lab) => lab.id)),
      now: operations.now,
    }),
    audit: operations.audit,
  });
  registerFileRoutes(app, {
    files: createAgentFiles({ connect: connectToAgent, keyFor: agentKeyFor, health: agents.health }),
    audit: operations.audit,
  });
  registerGradingRoutes(app, {
    grading,
    audit: operations.audit,
    onSelfChecked: (durationMs, gradable) =>
      recordGrading(operations.metrics, "self-check", durationMs, gradable),
  });
  await registerWeb(app, deps.webRoot);

  reads.start();
  // Runs a previous process left unfinished go on; the service waits for the cluster's answer first.
  // With replicas, the grading worker also picks up the runs the others start.
  gradingDuty.perform(
    gradingWork(grading, { pollMs: coordination.replicated ? gradingPollMs : undefined, log: app.log }),
  );
  coordination.duty(warmPoolLeaseName).perform(classes.pool);
  if (lti) coordination.duty(ltiOutboxLeaseName).perform(lti.outbox);
  // Before the server stops: duties end here and their leases go to another replica at once, after
  // the consoles' recordings took their last output (the stores close after the app).
  app.addHook("preClose", async () => {
    await consoles.close();
    await coordination.close();
  });
  app.addHook("onClose", async () => {
    // Grading first: its last requests must not see the session reads vanish under them.
    await grading.close();
    await reads.stop();
  });
  return app;
}
