// Who may do what, over every route the BFF serves x every role x ownership x section. Each route's rule comes
// from the access policy itself (access/policy.ts), read from the built apps (demo sign-in and
// OpenID Connect): the matrix is generated from the policy, and this test proves the apps enforce
// what it declares. The table below only says how to call a route and which answers mean "let in".
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { csrfHeader, type Me } from "../../common/api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import type { AccessRule, DeclaredAccess } from "../access/policy.ts";
import { encodeSignIn } from "../auth/current-user.ts";
import { createOidcAuthenticator } from "../auth/oidc/oidc-authenticator.ts";
import { readOidcSettings } from "../auth/oidc/oidc-config.ts";
import { startTestProvider, type TestProvider } from "../auth/oidc/testing/test-provider.ts";
import { aCheck, aGradingLab } from "../grading/testing/grading-fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, TestBrowser, type TestBff } from "../testing/test-bff.ts";
import { adminCluster, createSessionVm } from "./testing/cluster-sessions.ts";
import { routeKey, routeTable, type Route } from "./testing/route-table.ts";
import { freePort } from "../testing/free-port.ts";

const roles = ["anonymous", "owner", "other student", "ta", "ta of another section", "instructor"] as const;
type Role = (typeof roles)[number];
// The sessions tried are in section "a"; tara is a TA of the whole course.
const people: Record<Exclude<Role, "anonymous">, Me> = {
  owner: { username: "alice", role: "student", sections: ["a"] },
  "other student": { username: "bob", role: "student", sections: ["a"] },
  ta: { username: "tara", role: "ta", sections: [] },
  "ta of another section": { username: "tom", role: "ta", sections: ["b"] },
  instructor: { username: "ivan", role: "instructor", sections: [] },
};
const staff: ReadonlySet<Role> = new Set(["ta", "ta of another section", "instructor"]);

/** How to call a route; a route without one is a GET whose "let in" is 200. */
interface Call {
  /** Answers that mean "let in"; the request itself may still be refused for its own reasons. */
  allowed?: number[];
  body?: unknown;
  /** Each role acts on a session of its own (the request ends it). */
  ownSessionPerRole?: boolean;
  /**
   * Staff read only what their sections hold of it (access/sections.ts); here, of section a alone,
   * nothing: it does not exist for a TA of another section.
   */
  ofSectionA?: boolean;
}

const lab = aGradingLab([aCheck({ id: "hello", run: "true", selfCheck: true })], {
  session: {
    minutes: 60,
    extendMinutes: 15,
    maxExtensions: 2,
    terminals: 1,
    consoles: ["serial", "graphical"],
  },
});
const metricsToken = "a-metrics-token-long-enough-for-tests";

const calls: Record<string, Call> = {
  "POST /api/auth/login": { body: { username: "alice", password: "demo" } },
  "POST /api/auth/logout": { allowed: [204] },
  "GET /api/auth/oidc/login": { allowed: [302] },
  "GET /api/auth/oidc/callback": { allowed: [302] },
  "POST /api/sessions": { allowed: [201, 409], body: { labId: lab.id } },
  "DELETE /api/sessions/:id": { allowed: [202], ownSessionPerRole: true },
  "POST /api/sessions/:id/extend": { allowed: [200, 409] },
  "GET /api/sessions/:id/console": { allowed: [101] },
  "GET /api/sessions/:id/terminals/:terminal": { allowed: [101] },
  "GET /api/sessions/:id/vnc": { allowed: [101] },
  "POST /api/sessions/:id/checks": { allowed: [201] },
  // The session is halted: a restart or a raised hand is refused as a conflict, once let in.
  "POST /api/sessions/:id/restart": { allowed: [202, 409] },
  // Not paused by the idle limit: a resume is refused as a conflict, once let in.
  "POST /api/sessions/:id/resume": { allowed: [409] },
  "POST /api/sessions/:id/help": { allowed: [200, 409] },
  "POST /api/sessions/:id/help/acknowledge": { allowed: [200, 409] },
  // Files move only while the VM runs: let in, a halted session's are refused as a conflict.
  "PUT /api/sessions/:id/files": { allowed: [409] },
  "GET /api/sessions/:id/files": { allowed: [409] },
  // No console was ever opened, so there is no recording to let anyone have.
  "GET /api/sessions/:id/recording": { allowed: [404] },
  "GET /api/labs/:labId/wall": { allowed: [101] },
  "POST /api/labs/:labId/grading-runs": { allowed: [201, 409] },
  "POST /api/grading-runs/:runId/rerun": { allowed: [201, 409] },
  // The run graded bob's session alone, which is in section a.
  "GET /api/grading-runs/:runId": { ofSectionA: true },
  // A class far ahead: the warm pool boots nothing for it while the matrix runs.
  "POST /api/classes": {
    allowed: [201],
    body: { labId: lab.id, startsAt: "2099-01-01T09:00:00Z", endsAt: "2099-01-01T10:00:00Z", expected: 1 },
  },
  // No class has the session's id: let in, then not found.
  "DELETE /api/classes/:id": { allowed: [404] },
  // To section b: a TA of that section may send it, as may staff of the whole course.
  "POST /api/labs/:labId/announcements": {
    allowed: [201],
    body: { text: "The proxy is down", section: "b" },
  },
  // No announcement has that id: let in, then not found.
  "POST /api/sessions/:id/announcements/:announcementId/dismiss": { allowed: [404] },
  // Someone no request here signs in as: cutting them off disturbs no other row.
  "POST /api/admin/sign-outs": { body: { username: "nobody-in-particular" } },
  // An LMS's login and launch without their parameters: sent back to the sign-in page, whoever asks.
  "GET /api/lti/login": { allowed: [302] },
  "POST /api/lti/login": { allowed: [302] },
  "POST /api/lti/launch": { allowed: [302] },
  "GET /api/lti/continue": { allowed: [302] },
  // A confirmation posted without this console's Origin: refused, whoever sends it.
  "POST /api/lti/continue": { allowed: [302] },
  // Without an LMS's configuration address: nothing registered.
  "GET /api/lti/register": { allowed: [400] },
  // Deep linking is let in by the request's id alone, with or without a sign-in (an LMS frames it);
  // a session id is no such id. Nor is it a platform, course or score: let in, then refused.
  "GET /api/lti/deep-links/:id": { allowed: [400] },
  "POST /api/lti/deep-links/:id": { allowed: [400] },
  "GET /api/lti/deep-link-answers/:id": { allowed: [400] },
  "POST /api/lti/platforms/:id/approve": { allowed: [404] },
  "GET /api/lti/courses/:id/roster": { allowed: [400, 404] },
  "POST /api/lti/courses/:id/roster": { allowed: [400, 404] },
  "POST /api/lti/scores/:id/retry": { allowed: [400, 404] },
};

type Outcome = "allowed" | 401 | 403 | 404;

function expected(access: AccessRule, role: Role, call: Call): Outcome {
  if (call.ofSectionA && role === "ta of another section") return 404;
  if (access === "public") return "allowed";
  if (access === "metrics-token" || access === "replica-forward" || role === "anonymous") return 401;
  const student = !staff.has(role);
  // A session out of this person's sight does not exist for them, whatever the rule.
  const outOfSight = role === "other student" || role === "ta of another section";
  switch (access) {
    case "signed-in":
      return "allowed";
    case "session":
      return outOfSight ? 404 : "allowed";
    case "session-owner":
      return role === "owner" ? "allowed" : outOfSight ? 404 : 403;
    case "session-staff":
      return outOfSight ? 404 : student ? 403 : "allowed";
    case "staff":
      return student ? 403 : "allowed";
    case "instructor":
      return role === "instructor" ? "allowed" : 403;
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
  const halted = (owner: string) =>
    createSessionVm(cluster, lab, owner, { runStrategy: "Halted", section: "a" });
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
  // With LTI too, so its routes are in the matrix: a launch signs people in beside OIDC.
  oidcBff = await startTestBff({
    labs: [lab],
    emulator,
    port,
    publicUrl: consoleUrl,
    authenticator: createOidcAuthenticator(settings!),
    lti: { platforms: [], dynamicRegistration: true },
  });
}, 60_000);

afterAll(async () => {
  await bff?.close();
  await oidcBff?.close();
  await provider?.close();
  await emulator?.close();
  if (webRoot) await rm(webRoot, { recursive: true, force: true });
});

/** A cookie for a new sign-in of the role's person, so no request can disturb another's. */
function cookieFor(target: TestBff, role: Role): Record<string, string> {
  if (role === "anonymous") return {};
  const login = target.signIns.create(people[role]);
  return { cookie: `lab_sign_in=${target.app.signCookie(encodeSignIn(login))}` };
}

/** The policy's rule for a route; a HEAD is let in as its GET. */
function declaredFor(target: TestBff, route: Route): DeclaredAccess {
  const method = route.method === "HEAD" ? "GET" : route.method;
  const declared = target.app.accessPolicy.routes().get(routeKey({ method, url: route.url }));
  if (!declared) throw new Error(`the policy has no rule for ${routeKey(route)}`);
  return declared;
}

const callFor = (route: Route): Call => calls[routeKey(route)] ?? {};

function pathFor(route: Route, declared: DeclaredAccess, role: Role): string {
  const call = callFor(route);
  const session = (call.ownSessionPerRole ? ownSession[role] : undefined) ?? sessionId;
  const filled = route.url
    .replace(":id", session)
    .replace(":labId", lab.id)
    .replace(":runId", runId)
    .replace(":announcementId", "none")
    .replace(":terminal", "1")
    .replace("*", "sessions/some-page");
  const observe = declared.websocket && staff.has(role);
  return observe ? `${filled}?mode=observe` : filled;
}

function bodyFor(route: Route): unknown {
  if (route.url === "/api/labs/:labId/grading-runs") return { sessionIds: [haltedOfBob] };
  return callFor(route).body;
}

/** The HTTP status of one request (101 for an accepted websocket). */
async function statusOf(target: TestBff, route: Route, role: Role): Promise<number> {
  const declared = declaredFor(target, route);
  const url = `${target.url}${pathFor(route, declared, role)}`;
  if (declared.websocket && route.method === "GET") {
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
    body: mutation ? JSON.stringify(bodyFor(route) ?? {}) : undefined,
  });
  await response.arrayBuffer();
  return response.status;
}

function describeOutcome(outcome: Outcome | 426, call: Call): string {
  return outcome === "allowed" ? `one of ${(call.allowed ?? [200]).join("/")}` : String(outcome);
}

describe("the authorization matrix", () => {
  it("has a rule in the policy for every route of the demo and the OpenID Connect app", () => {
    for (const target of [bff, oidcBff]) {
      const served = routeTable(target.app)
        .filter((route) => route.method !== "HEAD")
        .map(routeKey);
      expect(
        [...target.app.accessPolicy.routes().keys()].filter((key) => !key.startsWith("HEAD ")).sort(),
      ).toEqual([...new Set(served)].sort());
    }
    // And no way of calling a route that is gone.
    const served = new Set([...routeTable(bff.app), ...routeTable(oidcBff.app)].map(routeKey));
    expect(Object.keys(calls).filter((key) => !served.has(key))).toEqual([]);
  });

  it("answers every route x role x ownership as the policy says", async () => {
    const mismatches: string[] = [];
    const check = async (target: TestBff, route: Route) => {
      const declared = declaredFor(target, route);
      const call = callFor({ method: route.method === "HEAD" ? "GET" : route.method, url: route.url });
      for (const role of roles) {
        const status = await statusOf(target, route, role);
        // A websocket's HEAD is no upgrade and answers 426 to anyone.
        const outcome: Outcome | 426 =
          route.method === "HEAD" && declared.websocket ? 426 : expected(declared.access, role, call);
        const ok =
          outcome === "allowed"
            ? (call.allowed ?? [200]).includes(status) || (route.method === "HEAD" && status === 200)
            : status === outcome;
        if (!ok) {
          mismatches.push(
            `${routeKey(route)} (${declared.access}) as ${role}: ${status}, expected ${describeOutcome(outcome, call)}`,
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
      (route) => route.method === "GET" && declaredFor(bff, route).websocket,
    );
    expect(sockets.length).toBeGreaterThanOrEqual(2);
    const accepted: string[] = [];
    for (const route of sockets) {
      const url = `${bff.url.replace(/^http/, "ws")}${pathFor(route, declaredFor(bff, route), "instructor")}`;
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
