// The composition root: builds the BFF from its dependencies (app-deps.ts) without listening
// (start.ts listens; tests and the bench build it with their own dependencies). Each part is made
// once, after the parts it needs, and registers its routes as it is made: read it top to bottom.
import fastifyCookie from "@fastify/cookie";
import Fastify, { LogController, type FastifyInstance } from "fastify";
import { enforceAccess } from "./access/policy.ts";
import { createAgents } from "./agent/agents.ts";
import type { AppDeps } from "./app-deps.ts";
import { Announcements } from "./announcements/announcements.ts";
import { registerAnnouncementRoutes } from "./announcements/routes.ts";
import { AuditLog } from "./audit/audit-log.ts";
import { registerAuditRoutes } from "./audit/routes.ts";
import { findSignIn } from "./auth/current-user.ts";
import { registerOidcRoutes } from "./auth/oidc/routes.ts";
import { registerAuthRoutes } from "./auth/routes.ts";
import { SignOutCookie } from "./auth/sign-out-cookie.ts";
import { CapacityService } from "./capacity/capacity-service.ts";
import { LaunchAdmission } from "./capacity/launch-admission.ts";
import { registerCapacityRoutes } from "./capacity/routes.ts";
import { createScheduledClasses } from "./classes/scheduled-classes.ts";
import { WarmPatchRefusals } from "./classes/warm-patch-refusals.ts";
import { createConsoles } from "./console/consoles.ts";
import { guestSizeThroughAgent } from "./console/guest-size.ts";
import { isWebsocketUpgrade } from "./console/websocket-upgrade.ts";
import { registerDoctorRoutes } from "./doctor/routes.ts";
import { SessionExtensions } from "./expiry/extension.ts";
import { SessionReaper } from "./expiry/reaper.ts";
import { registerExpiryRoutes } from "./expiry/routes.ts";
import { createAgentFiles } from "./files/agent-files.ts";
import { registerFileRoutes } from "./files/routes.ts";
import { registerGradingRoutes } from "./grading/routes.ts";
import { GradingService } from "./grading/service.ts";
import { registerHealthRoutes } from "./health-routes.ts";
import { HelpRequests } from "./help/help-requests.ts";
import { registerHelpRoutes } from "./help/routes.ts";
import { trustsProxy } from "./http/client-address.ts";
import { createCsrfGuard } from "./http/csrf.ts";
import { sendError } from "./http/errors.ts";
import { createOwnNames } from "./http/own-names.ts";
import { securityHeaders } from "./http/security-headers.ts";
import { defaultServerLimits, limitConnections, serverOptions } from "./http/server-limits.ts";
import { createIdleHandling } from "./idle/idle-handling.ts";
import { registerLabRoutes } from "./labs/routes.ts";
import { ltiOutboxLeaseName } from "./lti/grades/lti-grades.ts";
import { registerLti } from "./lti/register-lti.ts";
import { createAppMetrics, recordGrading, registerLiveMetrics } from "./metrics/app-metrics.ts";
import { registerMetricsRoute } from "./metrics/routes.ts";
import { RecordingStore } from "./recordings/recording-store.ts";
import { registerRecordingRoutes } from "./recordings/routes.ts";
import { reaperLeaseName, soloCoordination, type Coordination } from "./replicas/coordination.ts";
import { gradingLeaseName, gradingWork } from "./replicas/grading-duty.ts";
import { registerBootLogRoute } from "./sessions/boot-log-routes.ts";
import { LabNetworkPolicies } from "./sessions/lab-network-policy.ts";
import { LaunchGate } from "./sessions/launch-gate.ts";
import { registerPastSessionsRoute } from "./sessions/past-sessions-routes.ts";
import { createSessionReads } from "./sessions/reads.ts";
import { registerRestartRoute } from "./sessions/restart-routes.ts";
import { registerSessionRoutes } from "./sessions/routes.ts";
import { SessionService } from "./sessions/service.ts";
import { registerWeb } from "./spa/static.ts";
import { createTerminalOpener } from "./terminals/agent-terminal.ts";
import { ConsoleInputTimes } from "./wall/last-input.ts";
import { registerWallRoutes } from "./wall/routes.ts";
import { wallConsoles } from "./wall/wall-consoles.ts";

export type { AppDeps } from "./app-deps.ts";

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
  const { cluster, labs, signIns } = deps;
  const now = deps.now ?? (() => new Date());

  // The HTTP shell: limits, errors, the Host and CSRF guards, and the access policy, before any
  // route (each one is checked for a rule as it is added).
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
  enforceAccess(app, {
    signIn: (request) => findSignIn(request, signIns),
    session: (user, id) => sessions.get(user, id),
    isUpgrade: isWebsocketUpgrade,
    ownNames,
    metricsToken: deps.metricsToken,
    forwardSecret: deps.cookieSecret,
  });

  // What every part reads and reports to: the sessions as the cluster has them, this replica's
  // place among the others, metrics and the audit log.
  const reads = createSessionReads(cluster, deps.sessionsReadMode, app.log);
  const { source } = reads;
  const coordination = deps.coordination?.(app.log) ?? soloCoordination();
  app.decorate("coordination", coordination);
  const metrics = createAppMetrics();
  registerLiveMetrics(metrics, {
    source,
    kubeRequests: deps.kubeRequests,
    watchRestarts: () => reads.watchRestarts(),
  });
  registerMetricsRoute(app, { registry: metrics.registry });
  limitConnections(app, serverLimits, {
    isProxy: (address) => isProxy(address, 0),
    onRefused: (reason) => metrics.connectionsRefused.inc({ reason }),
    log: app.log,
  });
  const audit = new AuditLog({
    repository: deps.auditRepository,
    now,
    log: app.log,
    onWriteFailed: () => metrics.auditWriteFailures.inc(),
  });
  registerAuditRoutes(app, { audit });
  registerHealthRoutes(app, () => reads.readiness());
  const findSession = async (id: string) =>
    (await source.snapshot()).sessions.find((session) => session.id === id);
  // Before KubeVirt created the VMI nothing was printed: no log to read.
  const vmiUidOf = async (sessionId: string) =>
    (await source.snapshot()).objects.get(sessionId)?.vmi?.metadata.uid;

  // Signing in.
  const signOutCookie = new SignOutCookie(deps.cookieSecret);
  registerAuthRoutes(app, {
    authenticator: deps.authenticator,
    signIns,
    audit,
    signOutCookie,
    now: () => now().getTime(),
  });
  if (deps.authenticator.mode === "oidc") {
    registerOidcRoutes(app, { authenticator: deps.authenticator, signIns, audit, signOutCookie });
  }
  registerLabRoutes(app, { labs });

  // The lab agent in every VM: grading, terminals, files, activity and warm claims go through it,
  // over the cluster's port-forward, with the session's boot log to explain an agent that does not
  // listen.
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
    portForward: cluster.portForward,
    readBootLog: async (sessionId) => {
      const vmiUid = await vmiUidOf(sessionId);
      return vmiUid ? (await cluster.readBootLog(vmiUid)).lines : [];
    },
  });

  // Launches: capacity and quotas, scheduled classes with their warm pools, and the sessions.
  const capacity = new CapacityService({ facts: deps.clusterFacts, source, labs, now });
  registerCapacityRoutes(app, { capacity });
  const admission = new LaunchAdmission({
    quotas: deps.quotas,
    capacity,
    source,
    labs,
    now,
    log: app.log,
    onRefused: (reason) => metrics.launchesRefused.inc({ reason }),
  });
  const networkPolicies = new LabNetworkPolicies({ cluster, labs, log: app.log });
  const warmPatchRefusals = new WarmPatchRefusals({
    counter: metrics.warmPatchRefusals,
    now,
    log: app.log,
  });
  const classes = createScheduledClasses({
    repository: deps.classRepository,
    cluster,
    source,
    labs,
    capacity,
    agents,
    agentFile: deps.agentFile,
    warmKeyFor,
    sessionUserData,
    refusals: warmPatchRefusals,
    networkPolicies,
    audit,
    now,
    log: app.log,
    settings: deps.warmPool,
  });
  classes.register(app);
  const sessions = new SessionService({
    cluster,
    source,
    labs,
    agentUserData: sessionUserData,
    admission,
    networkPolicies,
    warm: classes.launches,
    gate: deps.writeRate && new LaunchGate(deps.writeRate.limits),
    now,
  });
  registerSessionRoutes(app, { sessions, audit });
  registerRestartRoute(app, { cluster, audit });
  registerBootLogRoute(app, { source, cluster });
  registerPastSessionsRoute(app, {
    audit,
    lastSelfCheck: async (sessionId) => (await deps.gradingRepository.listSelfChecks(sessionId, 1))[0],
    liveSessionIds: async () => new Set((await source.snapshot()).sessions.map((session) => session.id)),
  });

  // Expiry: extensions on request, and the reaper, a duty of one replica.
  registerExpiryRoutes(app, {
    extensions: new SessionExtensions({ cluster, source, sessions, labs, now }),
    audit,
    onExtended: (by) => metrics.sessionsExtended.inc({ by }),
  });
  const reaper = new SessionReaper({
    cluster,
    source,
    now,
    intervalMs: deps.reaperIntervalMs,
    log: app.log,
    onReaped: (session) => {
      metrics.sessionsReaped.inc();
      void audit.record({ action: "end", actor: "system", session, details: { reason: "expired" } });
    },
  });
  registerDoctorRoutes(app, {
    facts: deps.clusterFacts,
    vmNamespace: cluster.namespace,
    leaseNamespace: coordination.leaseNamespace,
    now,
    warmPatchRefusals: () => warmPatchRefusals.summary(),
  });

  // Grading, with LTI before it: LTI's outbox hears of every graded item and self-check.
  const lti =
    deps.lti &&
    (await registerLti(app, deps.lti, {
      signIns,
      signOutCookie,
      audit,
      labs,
      gradingRepository: deps.gradingRepository,
      secret: deps.cookieSecret,
      now,
    }));
  const gradingDuty = coordination.duty(gradingLeaseName);
  const grading = new GradingService({
    gradesHere: () => gradingDuty.held,
    repository: deps.gradingRepository,
    sessions: source,
    labs,
    log: app.log,
    agents,
    now,
    onItemGraded: ({ runId, sessionId, durationMs, result }) => {
      recordGrading(metrics, "run", durationMs, result.gradable);
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
  registerGradingRoutes(app, {
    grading,
    audit,
    onSelfChecked: (durationMs, gradable) => recordGrading(metrics, "self-check", durationMs, gradable),
  });

  // Consoles: recorded, their input counted as activity, shared across replicas.
  const recordings =
    deps.recordings && new RecordingStore({ ...deps.recordings, sessionOf: findSession, log: app.log });
  if (recordings) {
    registerRecordingRoutes(app, { recordings });
    const stopSweeping = recordings.sweepEvery(recordingSweepMs);
    app.addHook("onClose", async () => stopSweeping());
  }
  // Idle sessions: console input is written on the VM, one replica decides (idle/idle-handling.ts).
  const idle = createIdleHandling(app, {
    cluster,
    source,
    labs,
    agents,
    audit,
    coordination,
    now,
    timing: deps.idleTiming,
  });
  const inputTimes = new ConsoleInputTimes(now);
  const consoles = createConsoles(app, {
    cluster,
    labs,
    coordination,
    signIns,
    secret: deps.cookieSecret,
    audit,
    metrics,
    recordings,
    limits: deps.consoleLimits,
    setGuestSize: guestSizeThroughAgent(agents),
    openTerminal: createTerminalOpener({ connect: connectToAgent, keyFor: agentKeyFor }),
    findSession,
    onInput: (sessionId) => {
      inputTimes.heard(sessionId);
      idle.consoleInput(sessionId);
    },
    readConsoleLog: async (sessionId, bounds, signal) => {
      const vmiUid = await vmiUidOf(sessionId);
      return vmiUid ? cluster.readConsoleLog(vmiUid, bounds, signal) : { logging: "on", text: "" };
    },
  });
  registerFileRoutes(app, {
    files: createAgentFiles({ connect: connectToAgent, keyFor: agentKeyFor, health: agents.health }),
    audit,
  });

  // Staff: raised hands, the class wall and announcements.
  registerHelpRoutes(app, {
    help: new HelpRequests({ cluster, sessions, source, now }),
    audit,
  });
  registerWallRoutes(app, {
    consoles: wallConsoles(consoles, coordination, labs),
    sessions,
    labIds: new Set(labs.map((lab) => lab.id)),
    signIns,
    lastScore: async (id) => {
      const [latest] = await deps.gradingRepository.listSelfChecks(id, 1);
      return latest?.result.gradable ? latest.result.score : null;
    },
    lastInputs: async (ids) => inputTimes.lastInputs(ids, await source.snapshot()),
    onSearched: (durationMs) => metrics.wallSearchDuration.observe({}, durationMs / 1000),
    audit,
    timing: deps.wallTiming,
  });
  registerAnnouncementRoutes(app, {
    announcements: new Announcements({
      repository: deps.announcementRepository,
      classes: deps.classRepository,
      labIds: new Set(labs.map((lab) => lab.id)),
      now,
    }),
    audit,
  });
  await registerWeb(app, deps.webRoot);

  // Running: the session reads start, and each duty runs on the one replica that holds its lease.
  reads.start();
  // Runs a previous process left unfinished go on; the service waits for the cluster's answer first.
  // With replicas, the grading worker also picks up the runs the others start.
  gradingDuty.perform(
    gradingWork(grading, { pollMs: coordination.replicated ? gradingPollMs : undefined, log: app.log }),
  );
  coordination.duty(warmPoolLeaseName).perform(classes.pool);
  coordination.duty(reaperLeaseName).perform(reaper);
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
