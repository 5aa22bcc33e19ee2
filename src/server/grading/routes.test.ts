// The grading API over real HTTP with the BFF's own cookie sign-in, CSRF guard, error body and
// session visibility rules; grading goes to real agents on loopback.
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import fastifyCookie from "@fastify/cookie";
import Database from "better-sqlite3";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GradingRun } from "../../common/grading-api.ts";
import { createDemoAuthenticator } from "../auth/authenticator.ts";
import { SqliteEndedSignInRepository } from "../auth/ended-sign-ins/sqlite-repository.ts";
import { SignIns } from "../auth/sign-ins.ts";
import { hashPassword } from "../auth/passwords.ts";
import { SignOutCookie } from "../auth/sign-out-cookie.ts";
import { registerAuthRoutes } from "../auth/routes.ts";
import { demoPassword, demoUsers } from "../auth/users-file.ts";
import { createCsrfGuard } from "../http/csrf.ts";
import { createOwnNames } from "../http/own-names.ts";
import { sendError } from "../http/errors.ts";
import type { ClusterClient } from "../kube/client.ts";
import { SessionService } from "../sessions/service.ts";
import { eventually } from "../../common/testing/patience.ts";
import { TestBrowser } from "../testing/test-bff.ts";
import { createAgentClient } from "../agent/client.ts";
import { gradingDatabaseName } from "./grading-database.ts";
import { registerGradingRoutes } from "./routes.ts";
import { GradingService } from "./service.ts";
import { SqliteGradingRepository } from "./sqlite-repository.ts";
import { aCheck, aGradingLab, aSession, FixedSessions } from "./testing/grading-fixtures.ts";
import { startLoopbackAgents, type LoopbackAgents } from "../agent/testing/loopback-agents.ts";
import { enforceAccessForTests } from "../access/testing/policy-for-tests.ts";

const aliceSession = "linux-basics-alice001";
const bobSession = "linux-basics-bob00001";
const mallorySession = "linux-basics-mallory1";
const lab = aGradingLab([
  aCheck({
    id: "hello-file",
    points: 2,
    selfCheck: true,
    run: "grep -q hello ~/hello.txt",
    hint: "Use echo.",
  }),
  aCheck({ id: "secret", points: 3, run: "test -f ~/secret" }),
]);

let dir: string;
let agents: LoopbackAgents;
let repository: SqliteGradingRepository;
let endedSignIns: SqliteEndedSignInRepository;
let signIns: SignIns;
let grading: GradingService;
let app: FastifyInstance;
let url: string;
const browsers = new Map<string, TestBrowser>();

// The session list here stands in for the cluster; who may see which session is the real SessionService's rule.
const sessions = new FixedSessions([
  aSession({ id: aliceSession, owner: "alice" }),
  aSession({ id: bobSession, owner: "bob" }),
  aSession({ id: mallorySession, owner: '=HYPERLINK("http://evil","x"), mallory' }),
]);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "grading-routes-"));
  agents = await startLoopbackAgents([aliceSession, bobSession, mallorySession]);
  for (const id of [aliceSession, bobSession, mallorySession]) await chmod(agents.home(id), 0o777);
  await writeFile(path.join(agents.home(aliceSession), "hello.txt"), "hello\n");
  await writeFile(path.join(agents.home(aliceSession), "secret"), "");

  repository = SqliteGradingRepository.open(dir, { busyTimeoutMs: 20 });
  grading = new GradingService({
    repository,
    sessions,
    labs: [lab],
    agents: createAgentClient({ connect: agents.connect, keyFor: agents.keyFor }),
  });
  endedSignIns = SqliteEndedSignInRepository.open(dir);
  signIns = await SignIns.open({ store: endedSignIns });
  const passwordHash = await hashPassword(demoPassword);
  const sessionService = new SessionService({
    // Reads come from the session list; nothing in these routes creates or deletes a VM.
    cluster: {} as ClusterClient,
    source: sessions,
    labs: [lab],
  });

  // The same pieces, in the same order, as buildApp puts them together.
  app = Fastify();
  await app.register(fastifyCookie, { secret: "a-test-secret-that-is-long-enough-to-sign" });
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  app.addHook("onRequest", createCsrfGuard(createOwnNames({ allowedOrigins: [] })));
  registerAuthRoutes(app, {
    authenticator: await createDemoAuthenticator(demoUsers.map((user) => ({ ...user, passwordHash }))),
    signIns,
    signOutCookie: new SignOutCookie("a-test-secret-that-is-long-enough-to-sign"),
  });
  enforceAccessForTests(app, { signIns, sessions: sessionService });
  registerGradingRoutes(app, { grading });
  await app.listen({ host: "127.0.0.1", port: 0 });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  for (const username of ["alice", "bob", "tara", "ivan"]) {
    const browser = new TestBrowser(url);
    const answer = await browser.post("/api/auth/login", { username, password: demoPassword });
    expect(answer.status).toBe(200);
    browsers.set(username, browser);
  }
});

afterAll(async () => {
  await app?.close();
  await signIns?.close();
  await endedSignIns?.close();
  await grading?.close();
  await repository?.close();
  await agents?.close();
  await rm(dir, { recursive: true, force: true });
});

const as = (username: string) => {
  const browser = browsers.get(username);
  if (!browser) throw new Error(`${username} is not signed in`);
  return browser;
};

describe("self-checks over the API", () => {
  it("lets a student check their own session, then asks them to wait", async () => {
    const first = await as("alice").post(`/api/sessions/${aliceSession}/checks`);
    expect(first.status).toBe(201);
    expect(first.body.result).toMatchObject({ gradable: true, score: 2, maxScore: 2, owner: "alice" });
    expect(first.body.result.checks.map((check: { checkId: string }) => check.checkId)).toEqual([
      "hello-file",
    ]);

    const again = await as("alice").post(`/api/sessions/${aliceSession}/checks`);
    expect(again.status).toBe(429);
    expect(again.body.error.code).toBe("rate_limited");
    expect(again.body.error.message).toMatch(/^You checked this session moments ago\. Try again in \d+ s\.$/);
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(0);

    const history = await as("alice").get(`/api/sessions/${aliceSession}/checks`);
    expect(history.status).toBe(200);
    expect(history.body.items).toHaveLength(1);
    // A TA may read a student's history, but not check for them.
    expect((await as("tara").get(`/api/sessions/${aliceSession}/checks`)).body.items).toHaveLength(1);
    const byTa = await as("tara").post(`/api/sessions/${aliceSession}/checks`);
    expect(byTa.status).toBe(403);
    expect(byTa.body.error.code).toBe("forbidden");
  });

  it("hides other students' sessions, and needs sign-in and the CSRF header", async () => {
    const others = await as("bob").post(`/api/sessions/${aliceSession}/checks`);
    expect(others.status).toBe(404);
    expect((await as("bob").get(`/api/sessions/${aliceSession}/checks`)).status).toBe(404);

    const stranger = await new TestBrowser(url).get(`/api/sessions/${bobSession}/checks`);
    expect(stranger.status).toBe(401);
    const forged = await as("bob").request("POST", `/api/sessions/${bobSession}/checks`, undefined, {});
    expect(forged.status).toBe(403);
    expect(forged.body.error.code).toBe("csrf");
    expect((await as("bob").get("/api/sessions/NOT_AN_ID/checks")).status).toBe(400);
  });

  it("answers 503 database_unavailable while the database is locked", async () => {
    const other = new Database(path.join(dir, gradingDatabaseName));
    other.exec("BEGIN IMMEDIATE");
    try {
      const answer = await as("bob").post(`/api/sessions/${bobSession}/checks`);
      expect(answer.status).toBe(503);
      expect(answer.body.error).toEqual({
        code: "database_unavailable",
        message: `The database ${path.join(dir, gradingDatabaseName)} is locked by another program. Try again in a moment.`,
      });
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
  });
});

describe("grading runs over the API", () => {
  it("lets instructors start and re-run, TAs follow, and both export", async () => {
    for (const username of ["alice", "tara"]) {
      const refused = await as(username).post(`/api/labs/${lab.id}/grading-runs`);
      expect(refused.status).toBe(403);
      // One policy, one sentence per rule: the SPA shows its own words for the code.
      expect(refused.body.error).toEqual({
        code: "forbidden",
        message: "Only instructors can do this.",
        reason: "instructor_only",
      });
    }
    expect((await as("alice").get(`/api/labs/${lab.id}/grading-runs`)).status).toBe(403);
    expect((await as("ivan").post("/api/labs/no-such-lab/grading-runs")).status).toBe(404);

    const started = await as("ivan").post(`/api/labs/${lab.id}/grading-runs`);
    expect(started.status).toBe(201);
    const runId = GradingRun.parse(started.body).id;
    const done = await eventually(
      () => as("tara").get(`/api/grading-runs/${runId}`),
      (answer) => answer.body.status === "completed",
      { what: "the run to complete" },
    );
    expect(GradingRun.parse(done.body).items.map((item) => [item.owner, item.result?.score])).toEqual([
      ["alice", 5],
      ["bob", 0],
      ['=HYPERLINK("http://evil","x"), mallory', 0],
    ]);
    const etag = done.headers.get("etag") ?? "";
    expect((await as("tara").get(`/api/grading-runs/${runId}`, { "if-none-match": etag })).status).toBe(304);

    const list = await as("tara").get(`/api/labs/${lab.id}/grading-runs`);
    expect(list.body.items.map((run: { id: string }) => run.id)).toEqual([runId]);

    expect((await as("tara").post(`/api/grading-runs/${runId}/rerun`)).status).toBe(403);
    const rerun = await as("ivan").post(`/api/grading-runs/${runId}/rerun`);
    expect(rerun.status).toBe(201);
    expect(rerun.body).toMatchObject({ rerunOf: runId, selectedSessionIds: [bobSession, mallorySession] });
    await grading.settled(rerun.body.id);

    const csv = await fetch(`${url}/api/labs/${lab.id}/grades.csv`, {
      headers: await signedInCookie("tara"),
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(csv.headers.get("content-disposition")).toBe(`attachment; filename="${lab.id}-grades.csv"`);
    expect(csv.headers.get("cache-control")).toBe("no-store");
    const lines = (await csv.text()).split("\r\n");
    expect(lines[0]).toBe("student,lab,score,max,hello-file (max 2),secret (max 3),graded at,run id");
    // Sorted by name: "=" comes before letters. The formula is defused and the comma quoted.
    expect(lines[1]).toMatch(/^"'=HYPERLINK\(""http:\/\/evil"",""x""\), mallory",linux-basics,0,5,0,0,/);

    const json = await as("tara").get(`/api/labs/${lab.id}/grades.json`);
    expect(json.body.students.map((row: { student: string }) => row.student)).toEqual([
      '=HYPERLINK("http://evil","x"), mallory',
      "alice",
      "bob",
    ]);
    expect((await as("bob").get(`/api/labs/${lab.id}/grades.json`)).status).toBe(403);
  });

  it("validates what it is given", async () => {
    const notAList = await as("ivan").post(`/api/labs/${lab.id}/grading-runs`, { sessionIds: "everyone" });
    expect(notAList.status).toBe(400);
    expect(notAList.body.error.code).toBe("invalid");
    expect((await as("tara").get("/api/grading-runs/no_such_run!")).status).toBe(400);
    expect((await as("tara").get("/api/grading-runs/run-that-never-was")).status).toBe(404);
  });
});

/** A fresh sign-in, for a plain fetch that reads a non-JSON body. */
async function signedInCookie(username: string): Promise<Record<string, string>> {
  const response = await fetch(`${url}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-lab-console": "1" },
    body: JSON.stringify({ username, password: demoPassword }),
  });
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith("lab_sign_in="));
  return { cookie: cookie?.split(";")[0] ?? "" };
}
