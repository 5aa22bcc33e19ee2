// The grades side as the BFF runs it, against the test platform: the real stores on SQLite in a fresh
// data folder, the real audit log, the console's key ring whose JWKS the platform fetches, the outbox run as a
// duty of a solo coordination, and the routes on a bare fastify app with the BFF's own sign-in, CSRF
// guard, access policy and error body. Short backoffs and polls, so a test waits milliseconds.
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import fastifyCookie from "@fastify/cookie";
import Fastify, { type FastifyInstance } from "fastify";
import { enforceAccessForTests } from "../../../access/testing/policy-for-tests.ts";
import { AuditLog } from "../../../audit/audit-log.ts";
import { SqliteAuditRepository } from "../../../audit/sqlite-repository.ts";
import { createDemoAuthenticator } from "../../../auth/authenticator.ts";
import { SqliteEndedSignInRepository } from "../../../auth/ended-sign-ins/sqlite-repository.ts";
import { hashPassword } from "../../../auth/passwords.ts";
import { registerAuthRoutes } from "../../../auth/routes.ts";
import { SignIns } from "../../../auth/sign-ins.ts";
import { SignOutCookie } from "../../../auth/sign-out-cookie.ts";
import { demoPassword, demoUsers } from "../../../auth/users-file.ts";
import { SqliteGradingRepository } from "../../../grading/sqlite-repository.ts";
import { createCsrfGuard } from "../../../http/csrf.ts";
import { sendError } from "../../../http/errors.ts";
import { createOwnNames } from "../../../http/own-names.ts";
import { soloCoordination, type Coordination } from "../../../replicas/coordination.ts";
import { TestBrowser } from "../../../testing/test-bff.ts";
import type { Platform } from "../../model/model.ts";
import { startTestPlatform, type TestPlatform } from "../../testing/test-platform.ts";
import type { Backoff } from "../backoff.ts";
import { createLtiGrades, ltiOutboxLeaseName, type LtiGrades } from "../lti-grades.ts";
import type { NrpsLimits } from "../nrps-client.ts";
import { SqliteLtiGradesRepository } from "../sqlite-repository.ts";
import { directoryOf, platformOf, testTool } from "./test-launches.ts";
import { serveToolKeys, type ServedToolKeys } from "./served-tool-keys.ts";

export const testLabs = [
  { id: "linux-basics", title: "Linux basics" },
  { id: "git-workflow", title: "Git workflow" },
];

/** Long enough that a test sees a score wait between attempts, short enough not to wait for it. */
export const testBackoff: Backoff = { firstMs: 300, maxMs: 1_200, maxRetryAfterMs: 2_000 };

const secret = "a-test-secret-that-is-long-enough-to-sign";

export interface GradesHarness {
  lms: TestPlatform;
  platform: Platform;
  /** The console's key ring, whose JWKS the platform fetches. */
  toolKeys: ServedToolKeys;
  dataDir: string;
  grading: SqliteGradingRepository;
  auditRepository: SqliteAuditRepository;
  /** The running grades service and its store; restart() replaces both. */
  repository: SqliteLtiGradesRepository;
  grades: LtiGrades;
  /** What the service logged as warnings. */
  warnings: string[];
  /** Closes the service and its store as a stopping BFF does, then opens both again on the same folder. */
  restart(): Promise<void>;
  /** The routes of the first service, signed in as a demo user (ivan instructs, tara is a TA). */
  browser(username: string): Promise<TestBrowser>;
  close(): Promise<void>;
}

export async function startGradesHarness(options: { nrpsLimits?: NrpsLimits } = {}): Promise<GradesHarness> {
  const lms = await startTestPlatform();
  const dataDir = await mkdtemp(path.join(tmpdir(), "lti-grades-"));
  const toolKeys = await serveToolKeys(dataDir);
  lms.registerTool({
    clientId: testTool.clientId,
    loginUrl: "http://127.0.0.1:9/api/lti/login",
    redirectUris: [testTool.redirectUri],
    jwksUrl: toolKeys.jwksUrl,
    deploymentId: testTool.deploymentId,
  });
  const platform = platformOf(lms);
  const grading = SqliteGradingRepository.open(dataDir);
  const auditRepository = SqliteAuditRepository.open(dataDir);
  const warnings: string[] = [];
  const log = {
    info: () => undefined,
    warn: (object: object, message: string) => {
      const { err } = object as { err?: unknown };
      warnings.push(err instanceof Error ? `${message}: ${err.message}` : message);
    },
    error: (_object: object, message: string) => void warnings.push(message),
  };
  const audit = new AuditLog({ repository: auditRepository, now: () => new Date(), log });

  const open = (): {
    repository: SqliteLtiGradesRepository;
    grades: LtiGrades;
    coordination: Coordination;
  } => {
    const repository = SqliteLtiGradesRepository.open(dataDir);
    const grades = createLtiGrades({
      repository,
      platforms: directoryOf(platform),
      signer: toolKeys.signer,
      grading,
      labs: testLabs,
      audit,
      now: () => new Date(),
      log,
      backoff: testBackoff,
      outboxPollMs: 100,
      nrpsLimits: options.nrpsLimits,
    });
    const coordination = soloCoordination();
    coordination.duty(ltiOutboxLeaseName).perform(grades.outbox);
    return { repository, grades, coordination };
  };
  let running = open();

  const endedSignIns = SqliteEndedSignInRepository.open(dataDir);
  const signIns = await SignIns.open({ store: endedSignIns });
  const app: FastifyInstance = Fastify();
  await app.register(fastifyCookie, { secret });
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  app.addHook("onRequest", createCsrfGuard(createOwnNames({ allowedOrigins: [] })));
  const passwordHash = await hashPassword(demoPassword);
  registerAuthRoutes(app, {
    authenticator: await createDemoAuthenticator(demoUsers.map((user) => ({ ...user, passwordHash }))),
    signIns,
    signOutCookie: new SignOutCookie(secret),
  });
  enforceAccessForTests(app, { signIns });
  running.grades.register(app);
  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  const stop = async () => {
    await running.grades.close();
    await running.coordination.close();
    await running.repository.close();
  };

  const harness: GradesHarness = {
    lms,
    platform,
    toolKeys,
    dataDir,
    grading,
    auditRepository,
    repository: running.repository,
    grades: running.grades,
    warnings,
    async restart() {
      await stop();
      running = open();
      harness.repository = running.repository;
      harness.grades = running.grades;
    },
    async browser(username) {
      const browser = new TestBrowser(url);
      const answer = await browser.post("/api/auth/login", { username, password: demoPassword });
      if (answer.status !== 200)
        throw new Error(`${username} could not sign in: ${JSON.stringify(answer.body)}`);
      return browser;
    },
    async close() {
      await app.close();
      await stop();
      await signIns.close();
      await endedSignIns.close();
      await grading.close();
      await auditRepository.close();
      await lms.close();
      await toolKeys.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}
