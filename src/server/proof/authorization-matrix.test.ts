// Who may do what, over every route the BFF serves x every role x ownership. The routes come from
// the built apps' routers (demo sign-in and OpenID Connect), and each must have a row in the table
// below: a route added without one fails this test until someone decides who may call it.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { csrfHeader, type Me } from "../../common/api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { encodeLoginSession } from "../auth/current-user.ts";
import { createOidcAuthenticator } from "../auth/oidc/oidc-authenticator.ts";
import { readOidcSettings } from "../auth/oidc/oidc-config.ts";
import { startTestProvider, type TestProvider } from "../auth/oidc/testing/test-provider.ts";
import { aCheck, aGradingLab } from "../grading/testing/grading-fixtures.ts";
import { eventually, startTestBff, TestBrowser, type TestBff } from "../testing/test-bff.ts";
import { adminCluster, createSessionVm } from "./testing/cluster-sessions.ts";
import { routeKey, routeTable, type Route } from "./testing/route-table.ts";

const roles = ["anonymous", "owner", "other student", "ta", "instructor"] as const;
type Role = (typeof roles)[number];
const people: Record<Exclude<Role, "anonymous">, Me> = {
  owner: { username: "alice", role: "student" },
  "other student": { username: "bob", role: "student" },
  ta: { username: "tara", role: "ta" },
  instructor: { username: "ivan", role: "instructor" },
};

/**
 * public: anyone. signed-in: anyone signed in. session: the session's owner and staff; another
 * student is told it does not exist. session-owner: only the owner (staff are refused).
 * session-staff: staff only, and another student is told the session does not exist. staff: TAs
 * and instructors. instructor: instructors only. metrics-token: the bearer token, never a cookie.
 */
type Access =
  | "public"
  | "signed-in"
  | "session"
  | "session-owner"
  | "session-staff"
  | "staff"
  | "instructor"
  | "metrics-token";

interface Row {
  access: Access;
  /** Answers that mean "let in"; the request itself may still be refused for its own reasons. */
  allowed?: number[];
  body?: unknown;
  /** Each role acts on a session of its own (the request ends it). */
  ownSessionPerRole?: boolean;
  /** A websocket: tried as an upgrade, staff asking to observe. */
  socket?: boolean;
}

const lab = aGradingLab([aCheck({ id: "hello", run: "true", selfCheck: true })]);
const metricsToken = "a-metrics-token-long-enough-for-tests";

const table: Record<string, Row> = {
  "GET /*": { access: "public" },
  "GET /api/healthz": { access: "public" },
  "GET /api/readyz": { access: "public" },
  "GET /api/auth/config": { access: "public" },
  "POST /api/auth/login": { access: "public", body: { username: "alice", password: "demo" } },
  "POST /api/auth/logout": { access: "public", allowed: [204] },
  "GET /api/auth/oidc/login": { access: "public", allowed: [302] },
  "GET /api/auth/oidc/callback": { access: "public", allowed: [302] },
  "GET /api/me": { access: "signed-in" },
  "GET /api/labs": { access: "signed-in" },
  "GET /api/sessions": { access: "signed-in" },
  "POST /api/sessions": { access: "signed-in", allowed: [201, 409], body: { labId: lab.id } },
  "GET /api/sessions/:id": { access: "session" },
  "DELETE /api/sessions/:id": { access: "session", allowed: [202], ownSessionPerRole: true },
  "POST /api/sessions/:id/extend": { access: "session", allowed: [200, 409] },
  "GET /api/sessions/:id/console": { access: "session", allowed: [101], socket: true },
  "POST /api/sessions/:id/checks": { access: "session-owner", allowed: [201] },
  "GET /api/sessions/:id/checks": { access: "session" },
  "GET /api/sessions/:id/boot-log": { access: "session" },
  // The session is halted: a restart or a raised hand is refused as a conflict, once let in.
  "POST /api/sessions/:id/restart": { access: "session", allowed: [202, 409] },
  "POST /api/sessions/:id/help": { access: "session-owner", allowed: [200, 409] },
  "DELETE /api/sessions/:id/help": { access: "session-owner" },
  "POST /api/sessions/:id/help/acknowledge": { access: "session-staff", allowed: [200, 409] },
  // No console was ever opened, so there is no recording to let anyone have.
  "GET /api/sessions/:id/recording": { access: "session", allowed: [404] },
  "GET /api/recordings": { access: "signed-in" },
  "GET /api/labs/:labId/wall": { access: "staff", allowed: [101], socket: true },
  "POST /api/labs/:labId/grading-runs": { access: "instructor", allowed: [201, 409] },
  "GET /api/labs/:labId/grading-runs": { access: "staff" },
  "GET /api/grading-runs/:runId": { access: "staff" },
  "POST /api/grading-runs/:runId/rerun": { access: "instructor", allowed: [201, 409] },
  "GET /api/labs/:labId/grades.csv": { access: "staff" },
  "GET /api/labs/:labId/grades.json": { access: "staff" },
  "GET /api/capacity": { access: "staff" },
  "GET /api/doctor": { access: "instructor" },
  "GET /api/audit": { access: "instructor" },
  "GET /api/audit/export": { access: "instructor" },
  // Someone no request here signs in as: cutting them off disturbs no other row.
  "POST /api/admin/sign-outs": { access: "instructor", body: { username: "nobody-in-particular" } },
  "GET /metrics": { access: "metrics-token" },
};

type Outcome = "allowed" | 401 | 403 | 404;

function expected(access: Access, role: Role): Outcome {
  if (access === "public") return "allowed";
  if (access === "metrics-token" || role === "anonymous") return 401;
  const student = role === "owner" || role === "other student";
  switch (access) {
    case "signed-in":
      return "allowed";
    case "session":
      return role === "other student" ? 404 : "allowed";
    case "session-owner":
      return role === "owner" ? "allowed" : role === "other student" ? 404 : 403;
    case "session-staff":
      return role === "other student" ? 404 : student ? 403 : "allowed";
    case "staff":
      return student ? 403 : "allowed";
    case "instructor":
      return role === "instructor" ? "allowed" : 403;
    default:
      throw new Error(`no rule for ${access}`);
  }
}

let emulator: TestEmulator;
let bff: TestBff;
let oidcBff: TestBff;
let provider: TestProvider;
let webRoot: string;
let sessionId: string;
let ownSession: Partial<Record<Role, string>>;
let runId: string;
let haltedOfBob: string;

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
  webRoot = await mkdtemp(path.join(tmpdir(), "proof-web-"));
  await writeFile(path.join(webRoot, "index.html"), "<!doctype html><title>Lab Console</title>");
  bff = await startTestBff({ labs: [lab], emulator, metricsToken, webRoot });

  // Halted sessions: they exist and belong to someone, and nothing needs to boot.
  const cluster = adminCluster(emulator);
  const halted = (owner: string) => createSessionVm(cluster, lab, owner, { runStrategy: "Halted" });
  [sessionId, haltedOfBob] = await Promise.all([halted("alice"), halted("bob")]);
  const [forOwner, forTa, forInstructor] = await Promise.all([
    halted("alice"),
    halted("alice"),
    halted("alice"),
  ]);
  ownSession = { owner: forOwner, ta: forTa, instructor: forInstructor };

  const ivan = await bff.signIn("ivan");
  await eventually(
    () => ivan.get(`/api/sessions/${haltedOfBob}`),
    (answer) => answer.status === 200,
    { what: "the sessions in the BFF's view" },
  );
  const started = await ivan.post(`/api/labs/${lab.id}/grading-runs`, { sessionIds: [haltedOfBob] });
  expect(started.status).toBe(201);
  runId = started.body.id;
  await eventually(
    () => ivan.get(`/api/grading-runs/${runId}`),
    (answer) => answer.body.status !== "running",
    { what: "the grading run to finish" },
  );

  const port = await freePort();
  const consoleUrl = `http://127.0.0.1:${port}`;
  provider = await startTestProvider({
    accounts: [],
    client: {
      clientId: "lab-console",
      clientSecret: "a-client-secret",
      redirectUri: `${consoleUrl}/api/auth/oidc/callback`,
      postLogoutRedirectUri: `${consoleUrl}/sign-in`,
    },
  });
  const { settings } = readOidcSettings({
    OIDC_ISSUER_URL: provider.issuer,
    OIDC_CLIENT_ID: "lab-console",
    OIDC_CLIENT_SECRET: "a-client-secret",
    PUBLIC_URL: consoleUrl,
    OIDC_ROLE_GROUPS: JSON.stringify({ instructor: ["staff"], ta: ["tas"], student: ["students"] }),
  });
  oidcBff = await startTestBff({
    labs: [lab],
    emulator,
    port,
    authenticator: createOidcAuthenticator(settings!),
  });
}, 60_000);

afterAll(async () => {
  await bff?.close();
  await oidcBff?.close();
  await provider?.close();
  await emulator?.close();
  if (webRoot) await rm(webRoot, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A cookie for a new sign-in of the role's person, so no request can disturb another's. */
function cookieFor(target: TestBff, role: Role): Record<string, string> {
  if (role === "anonymous") return {};
  const login = target.loginSessions.create(people[role]);
  return { cookie: `lab_session=${target.app.signCookie(encodeLoginSession(login))}` };
}

function pathFor(route: Route, row: Row, role: Role): string {
  const session = (row.ownSessionPerRole ? ownSession[role] : undefined) ?? sessionId;
  const filled = route.url
    .replace(":id", session)
    .replace(":labId", lab.id)
    .replace(":runId", runId)
    .replace("*", "sessions/some-page");
  const observe = row.socket && (role === "ta" || role === "instructor");
  return observe ? `${filled}?mode=observe` : filled;
}

function bodyFor(route: Route, row: Row): unknown {
  if (route.url === "/api/labs/:labId/grading-runs") return { sessionIds: [haltedOfBob] };
  return row.body;
}

/** The HTTP status of one request (101 for an accepted websocket). */
async function statusOf(target: TestBff, route: Route, row: Row, role: Role): Promise<number> {
  const url = `${target.url}${pathFor(route, row, role)}`;
  if (row.socket && route.method === "GET") {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url.replace(/^http/, "ws"), {
        headers: { ...cookieFor(target, role), origin: target.url },
      });
      socket.once("open", () => {
        socket.close();
        resolve(101);
      });
      socket.once("unexpected-response", (_request, response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      socket.once("error", reject);
    });
  }
  const mutation = !["GET", "HEAD"].includes(route.method);
  const response = await fetch(url, {
    method: route.method,
    redirect: "manual",
    headers: {
      ...cookieFor(target, role),
      ...(mutation ? { [csrfHeader.name]: csrfHeader.value } : {}),
      ...(mutation ? { "content-type": "application/json" } : {}),
    },
    body: mutation ? JSON.stringify(bodyFor(route, row) ?? {}) : undefined,
  });
  await response.arrayBuffer();
  return response.status;
}

function describeOutcome(outcome: Outcome | 426, row: Row): string {
  return outcome === "allowed" ? `one of ${(row.allowed ?? [200]).join("/")}` : String(outcome);
}

describe("the authorization matrix", () => {
  it("has a row for every route of the demo and the OpenID Connect app", () => {
    const routes = [...routeTable(bff.app), ...routeTable(oidcBff.app)];
    const missing = [
      ...new Set(
        routes
          .filter((route) => route.method !== "HEAD")
          .map(routeKey)
          .filter((key) => !(key in table)),
      ),
    ];
    expect(missing, "routes without a row in the authorization table").toEqual([]);
    // And no row for a route that is gone.
    const served = new Set(routes.map(routeKey));
    expect(Object.keys(table).filter((key) => !served.has(key))).toEqual([]);
  });

  it("answers every route x role x ownership as the table says", async () => {
    const mismatches: string[] = [];
    const check = async (target: TestBff, route: Route) => {
      // HEAD answers as its GET does; a websocket's HEAD is no upgrade and answers 426 to anyone.
      const row = table[routeKey({ method: route.method === "HEAD" ? "GET" : route.method, url: route.url })];
      if (!row) throw new Error(`no row for ${routeKey(route)}`);
      for (const role of roles) {
        const status = await statusOf(target, route, row, role);
        const outcome: Outcome | 426 =
          route.method === "HEAD" && row.socket ? 426 : expected(row.access, role);
        const ok =
          outcome === "allowed"
            ? (row.allowed ?? [200]).includes(status) || (route.method === "HEAD" && status === 200)
            : status === outcome;
        if (!ok) {
          mismatches.push(
            `${routeKey(route)} as ${role}: ${status}, expected ${describeOutcome(outcome, row)}`,
          );
        }
      }
    };
    for (const route of routeTable(bff.app)) await check(bff, route);
    const demoRoutes = new Set(routeTable(bff.app).map(routeKey));
    for (const route of routeTable(oidcBff.app).filter((each) => !demoRoutes.has(routeKey(each)))) {
      await check(oidcBff, route);
    }
    expect(mismatches).toEqual([]);
  });

  it("refuses every websocket from a foreign or missing Origin, even with a valid sign-in", async () => {
    const sockets = routeTable(bff.app).filter(
      (route) => route.method === "GET" && table[routeKey(route)]?.socket,
    );
    expect(sockets.length).toBeGreaterThanOrEqual(2);
    const accepted: string[] = [];
    for (const route of sockets) {
      const url = `${bff.url.replace(/^http/, "ws")}${pathFor(route, table[routeKey(route)]!, "instructor")}`;
      for (const origin of ["https://evil.example", "null", undefined]) {
        const status = await new Promise<number>((resolve, reject) => {
          const socket = new WebSocket(url, {
            headers: { ...cookieFor(bff, "instructor"), ...(origin === undefined ? {} : { origin }) },
          });
          socket.once("open", () => {
            socket.close();
            resolve(101);
          });
          socket.once("unexpected-response", (_request, response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          });
          socket.once("error", reject);
        });
        if (status !== 403) accepted.push(`${routeKey(route)} from ${origin ?? "no origin"}: ${status}`);
      }
    }
    expect(accepted).toEqual([]);
  });

  it("serves /metrics with its bearer token only", async () => {
    const withToken = await fetch(`${bff.url}/metrics`, {
      headers: { authorization: `Bearer ${metricsToken}` },
    });
    expect(withToken.status).toBe(200);
    const wrong = await fetch(`${bff.url}/metrics`, { headers: { authorization: "Bearer not-the-token" } });
    expect(wrong.status).toBe(401);
    const anonymous = new TestBrowser(bff.url);
    expect((await anonymous.get("/metrics")).status).toBe(401);
  });
});
