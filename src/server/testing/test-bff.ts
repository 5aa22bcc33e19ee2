// The BFF against a real emulator on port 0 (fast timing), for integration tests and nothing else.
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import type { KubeConfig } from "@kubernetes/client-node";
import { csrfHeader } from "../../common/api.ts";
import type { Lab } from "../../common/lab.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { buildApp, type AppDeps } from "../app.ts";
import { SqliteLtiGradesRepository } from "../lti/grades/sqlite-repository.ts";
import { SqliteLtiLaunchStore } from "../lti/launch/store/sqlite-launch-store.ts";
import type { LtiSettings } from "../lti/register-lti.ts";
import { SqliteAnnouncementRepository } from "../announcements/sqlite-repository.ts";
import { SqliteAuditRepository } from "../audit/sqlite-repository.ts";
import { createDemoAuthenticator } from "../auth/authenticator.ts";
import { SqliteEndedSignInRepository } from "../auth/ended-sign-ins/sqlite-repository.ts";
import { SignIns } from "../auth/sign-ins.ts";
import { hashPassword } from "../auth/passwords.ts";
import { demoPassword, demoUsers } from "../auth/users-file.ts";
import type { SessionQuotas } from "../capacity/launch-admission.ts";
import type { TrustedProxies } from "../http/client-address.ts";
import type { ServerLimits } from "../http/server-limits.ts";
import { loadAgentFile } from "../agent/agent-file.ts";
import { SqliteGradingRepository } from "../grading/sqlite-repository.ts";
import { SqliteClassRepository } from "../classes/sqlite-repository.ts";
import { createClusterClient } from "../kube/client.ts";
import { KeptAliveKubeConfig } from "../kube/kept-alive.ts";
import type { WriteRate } from "../kube/write-rate.ts";
import { FileRecordingStorage } from "../recordings/file-recording-storage.ts";
import { createClusterFacts } from "../kube/cluster-facts.ts";
import { KubeRequestCounter } from "../kube/request-counter.ts";
import { sessionsSelector } from "../sessions/labels.ts";
import type { SessionsReadMode } from "../sessions/reads.ts";

export const testNamespace = "lab-sessions";
export const testAgentKeySecret = "a-test-agent-token-secret-long-enough";

/** A test BFF on a cluster of the test's own (a real API server), given the BFF's credentials. */
export interface TestBffOnCluster {
  url: string;
  app: FastifyInstance;
  kubeRequests: KubeRequestCounter;
  signIns: SignIns;
  /** Where this BFF writes console recordings. */
  recordingsDir: string;
  /** A browser signed in as one of the demo users. */
  signIn(username: string): Promise<TestBrowser>;
  close(): Promise<void>;
}

export interface TestBff extends TestBffOnCluster {
  emulator: TestEmulator;
}

export interface TestBffOptions {
  labs: Lab[];
  sessionsReadMode?: SessionsReadMode;
  /**
   * Share a running emulator (it is then left running on close). Start it with deployRbac: the BFF
   * runs as deploy/base's service account under deploy/base's RBAC, as it would on a cluster.
   */
  emulator?: TestEmulator;
  /**
   * Where grading.db (and audit.db, ended-sign-ins.db) live; share it to restart the BFF on the same
   * results and sign-outs, or to run two BFFs side by side as replicas. Default: a fresh folder.
   */
  gradingDataDir?: string;
  /** How often sign-outs made by another BFF on the same folder are read. Default 2 s. */
  signOutPollIntervalMs?: number;
  /** SESSION_SECRET. Default: the same for every test BFF, as replicas share it. */
  cookieSecret?: string;
  /** PUBLIC_URL and TRUST_PROXY. Default: neither, as for npm start on a laptop. */
  publicUrl?: string;
  trustProxy?: TrustedProxies;
  /** Timeouts and connection caps (http/server-limits.ts); tests shorten and lower them. */
  serverLimits?: Partial<ServerLimits>;
  /** Routes of the test's own, for tests of the server itself (slow answers, big ones). */
  routes?: (app: FastifyInstance) => void;
  gradingLimits?: AppDeps["gradingLimits"];
  consoleLimits?: AppDeps["consoleLimits"];
  wallTiming?: AppDeps["wallTiming"];
  idleTiming?: AppDeps["idleTiming"];
  /** Default: 16 MiB per recording, kept 30 days. */
  recordingLimits?: { maxBytes?: number; retentionMs?: number };
  /** Default: one active session per student, no other limit. */
  quotas?: Partial<SessionQuotas>;
  /** The clock for expiries, extensions and the reaper. */
  now?: () => Date;
  reaperIntervalMs?: number;
  metricsToken?: string;
  /** Default: the demo users (password "demo"). */
  authenticator?: AppDeps["authenticator"];
  /** The warm pool's timing and pace; default production's. */
  warmPool?: AppDeps["warmPool"];
  /** A bound on API writes, shared with the cluster client; default none. */
  writeRate?: WriteRate;
  /** Default 0: any free port. */
  port?: number;
  /** A built SPA to serve (dist/web's layout); default none, the API alone. */
  webRoot?: string;
  /**
   * LTI 1.3 with these platforms, its stores beside grading.db. Launch URLs are built on publicUrl,
   * so give it (and the port it names) too.
   */
  lti?: Pick<LtiSettings, "platforms" | "dynamicRegistration" | "grades">;
}

/** A test BFF on the emulator: its own, or a shared one given in the options. */
export async function startTestBff(options: TestBffOptions): Promise<TestBff> {
  const emulator = options.emulator ?? (await startTestEmulator({ deployRbac: true }));
  try {
    const bff = await startTestBffOnCluster(emulator.bffKubeConfig(), options);
    return {
      ...bff,
      emulator,
      async close() {
        await bff.close();
        if (options.emulator === undefined) await emulator.close().catch(() => undefined);
      },
    };
  } catch (error) {
    if (options.emulator === undefined) await emulator.close().catch(() => undefined);
    throw error;
  }
}

export async function startTestBffOnCluster(
  clusterKubeConfig: KubeConfig,
  options: Omit<TestBffOptions, "emulator">,
): Promise<TestBffOnCluster> {
  // As start.ts builds it: requests to the API server keep their connections.
  const kubeConfig = KeptAliveKubeConfig.from(clusterKubeConfig);
  const ownsDataDir = options.gradingDataDir === undefined;
  const gradingDataDir = options.gradingDataDir ?? (await mkdtemp(path.join(tmpdir(), "test-bff-")));
  const gradingRepository = SqliteGradingRepository.open(gradingDataDir);
  // Beside grading.db, as both live in DATA_DIR in production.
  const auditRepository = SqliteAuditRepository.open(gradingDataDir);
  const endedSignIns = SqliteEndedSignInRepository.open(gradingDataDir);
  const classRepository = SqliteClassRepository.open(gradingDataDir);
  const announcementRepository = SqliteAnnouncementRepository.open(gradingDataDir);
  const ltiStores = options.lti && {
    launchStore: SqliteLtiLaunchStore.open(gradingDataDir),
    gradesRepository: SqliteLtiGradesRepository.open(gradingDataDir),
  };
  const kubeRequests = new KubeRequestCounter();
  const cluster = createClusterClient(kubeConfig, {
    namespace: testNamespace,
    labelSelector: sessionsSelector,
    counter: kubeRequests,
    writeRate: options.writeRate,
  });
  const passwordHash = await hashPassword(demoPassword);
  const signIns = await SignIns.open({
    store: endedSignIns,
    pollIntervalMs: options.signOutPollIntervalMs,
  });
  const app = await buildApp({
    cluster,
    sessionsReadMode: options.sessionsReadMode ?? "cache",
    authenticator:
      options.authenticator ??
      (await createDemoAuthenticator(demoUsers.map((user) => ({ ...user, passwordHash })))),
    signIns,
    cookieSecret: options.cookieSecret ?? "a-test-secret-that-is-long-enough-to-sign",
    labs: options.labs,
    gradingRepository,
    classRepository,
    announcementRepository,
    warmPool: options.warmPool,
    writeRate: options.writeRate,
    agentKeySecret: testAgentKeySecret,
    agentFile: await loadAgentFile(),
    gradingLimits: options.gradingLimits,
    consoleLimits: options.consoleLimits,
    wallTiming: options.wallTiming,
    idleTiming: options.idleTiming,
    recordings: {
      storage: new FileRecordingStorage(path.join(gradingDataDir, "recordings")),
      maxBytes: options.recordingLimits?.maxBytes ?? 16 * 1024 * 1024,
      retentionMs: options.recordingLimits?.retentionMs ?? 30 * 86_400_000,
    },
    clusterFacts: createClusterFacts(kubeConfig, kubeRequests),
    kubeRequests,
    auditRepository,
    quotas: { perStudent: 1, perLab: null, total: null, ...options.quotas },
    metricsToken: options.metricsToken,
    reaperIntervalMs: options.reaperIntervalMs,
    now: options.now,
    allowedOrigins: [],
    publicUrl: options.publicUrl,
    trustProxy: options.trustProxy,
    serverLimits: options.serverLimits,
    webRoot: options.webRoot,
    lti: options.lti &&
      ltiStores && {
        ...options.lti,
        ...ltiStores,
        publicUrl: new URL(options.publicUrl ?? "http://127.0.0.1"),
      },
  });
  options.routes?.(app);
  await app.listen({ host: "127.0.0.1", port: options.port ?? 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  let closed = false;
  return {
    url,
    app,
    kubeRequests,
    signIns,
    recordingsDir: path.join(gradingDataDir, "recordings"),
    async signIn(username) {
      const browser = new TestBrowser(url);
      const answer = await browser.post("/api/auth/login", { username, password: demoPassword });
      if (answer.status !== 200) throw new Error(`sign-in as ${username} failed: ${answer.status}`);
      return browser;
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      kubeConfig.close();
      await signIns.close();
      await gradingRepository.close();
      await auditRepository.close();
      await endedSignIns.close();
      await classRepository.close();
      await announcementRepository.close();
      await ltiStores?.launchStore.close();
      await ltiStores?.gradesRepository.close();
      if (ownsDataDir) await rm(gradingDataDir, { recursive: true, force: true });
    },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  /** The parsed JSON body, the text of any other body, or undefined when there was none. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary fields
}

/** Keeps the session cookie like a browser and sends the CSRF header on mutations like the SPA. */
export class TestBrowser {
  private cookie: string | undefined;

  constructor(readonly baseUrl: string) {}

  /**
   * Another browser holding the same cookie, as a stolen copy would; or, given another BFF's URL, this
   * browser's cookie taken there, as a load balancer would send it to another replica.
   */
  copy(baseUrl = this.baseUrl): TestBrowser {
    const twin = new TestBrowser(baseUrl);
    twin.cookie = this.cookie;
    return twin;
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    return this.request("GET", path, undefined, headers);
  }

  post(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    return this.request("POST", path, body, { [csrfHeader.name]: csrfHeader.value, ...headers });
  }

  delete(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    return this.request("DELETE", path, undefined, { [csrfHeader.name]: csrfHeader.value, ...headers });
  }

  async request(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<Answer> {
    const response = await fetch(this.baseUrl + path, {
      method,
      headers: {
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = response.headers.getSetCookie().find((line) => line.startsWith("lab_sign_in="));
    if (setCookie) {
      const pair = setCookie.split(";")[0] ?? "";
      this.cookie = pair === "lab_sign_in=" ? undefined : pair;
    }
    const text = await response.text();
    const json = response.headers.get("content-type")?.startsWith("application/json") ?? false;
    return {
      status: response.status,
      headers: response.headers,
      body: text ? (json ? JSON.parse(text) : text) : undefined,
    };
  }
}

/**
 * Launches a session of `labId` as this browser does and waits until its VM runs (a real guest's
 * takes minutes: give it a `timeoutMs`); returns its id.
 */
export async function launchRunning(
  browser: TestBrowser,
  labId: string,
  timeoutMs = 20_000,
): Promise<string> {
  const created = await browser.post("/api/sessions", { labId });
  if (created.status !== 201) {
    throw new Error(`launching ${labId} answered ${created.status}: ${JSON.stringify(created.body)}`);
  }
  const id = created.body.id as string;
  await eventually(
    () => browser.get(`/api/sessions/${id}`),
    (answer) => answer.body?.status === "running",
    { what: `session ${id} running`, timeoutMs },
  );
  return id;
}
