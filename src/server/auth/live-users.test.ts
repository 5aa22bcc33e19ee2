// The users file edited while the console runs, on a real fastify with the sign-in routes: a person
// removed or given another role or other sections is refused on their next request, without a restart.
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fastifyCookie from "@fastify/cookie";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Role } from "../../common/api.ts";
import { eventually } from "../../common/testing/patience.ts";
import { createDemoAuthenticator } from "./authenticator.ts";
import { SqliteEndedSignInRepository } from "./ended-sign-ins/sqlite-repository.ts";
import { LiveUsers } from "./live-users.ts";
import { SignIns, type SignIn } from "./sign-ins.ts";
import { hashPassword } from "./passwords.ts";
import { SignOutCookie } from "./sign-out-cookie.ts";
import { registerAuthRoutes } from "./routes.ts";
import { enforceAccessForTests } from "../access/testing/policy-for-tests.ts";

const secret = "a-test-secret-that-is-long-enough-to-sign";
let dir: string;
let file: string;
let passwordHash: string;
let store: SqliteEndedSignInRepository;
let users: LiveUsers;
let signIns: SignIns;
let app: FastifyInstance;
const ended: SignIn[] = [];
const warnings: string[] = [];

/** Each person's role, or role and sections. */
async function writeUsers(people: Record<string, Role | { role: Role; sections: string[] }>): Promise<void> {
  const list = Object.entries(people).map(([username, entry]) => ({
    username,
    ...(typeof entry === "string" ? { role: entry } : entry),
    passwordHash,
  }));
  // Written aside and renamed over, as editors and ConfigMaps do.
  await writeFile(`${file}.new`, JSON.stringify({ users: list }));
  await rename(`${file}.new`, file);
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "live-users-"));
  file = path.join(dir, "users.json");
  passwordHash ??= await hashPassword("demo");
  await writeUsers({ tara: "ta", bob: "student", ivan: "instructor" });
  users = await LiveUsers.open(file, {
    checkIntervalMs: 20,
    log: { info: () => undefined, warn: (message) => warnings.push(message) },
  });
  store = SqliteEndedSignInRepository.open(dir);
  signIns = await SignIns.open({ store, standing: users });
  signIns.onEnded((session) => ended.push(session));
  app = Fastify();
  await app.register(fastifyCookie, { secret });
  enforceAccessForTests(app, { signIns });
  registerAuthRoutes(app, {
    authenticator: await createDemoAuthenticator(users),
    signIns,
    signOutCookie: new SignOutCookie(secret),
  });
});
afterEach(async () => {
  await app?.close();
  await signIns?.close();
  users?.close();
  await store?.close();
  await rm(dir, { recursive: true, force: true });
  ended.length = 0;
  warnings.length = 0;
});

async function signIn(username: string): Promise<{ status: number; cookie: string }> {
  const response = await app.inject({
    method: "POST",
    url: "/api/auth/login",
    payload: { username, password: "demo" },
  });
  const line = [response.headers["set-cookie"] ?? []].flat()[0] ?? "";
  return { status: response.statusCode, cookie: line.split(";")[0] ?? "" };
}

async function me(cookie: string): Promise<number> {
  return (await app.inject({ url: "/api/me", headers: { cookie } })).statusCode;
}

describe("the users file while the console runs", () => {
  it("refuses a person removed from it or given another role, from their next request", async () => {
    const tara = await signIn("tara");
    const bob = await signIn("bob");
    const ivan = await signIn("ivan");
    expect(await me(tara.cookie)).toBe(200);
    expect(await me(bob.cookie)).toBe(200);

    await writeUsers({ tara: "student", ivan: "instructor" });
    await eventually(
      () => me(tara.cookie),
      (status) => status === 401,
      { what: "the demoted TA's sign-in to be refused" },
    );
    expect(await me(bob.cookie)).toBe(401);
    expect(await me(ivan.cookie)).toBe(200);
    // Whatever was open for them (consoles, the class wall) is told to close.
    expect(ended.map((session) => session.user.username).sort()).toEqual(["bob", "tara"]);

    // The file decides who may sign in, too.
    expect((await signIn("bob")).status).toBe(401);
    const taraAgain = await signIn("tara");
    expect(taraAgain.status).toBe(200);
    expect((await app.inject({ url: "/api/me", headers: { cookie: taraAgain.cookie } })).json()).toEqual({
      username: "tara",
      role: "student",
      sections: [],
    });
  });

  it("says who a browser is signed in as, with a 200 for nobody too, as the access rules judge it", async () => {
    const state = async (cookie?: string) => {
      const response = await app.inject({ url: "/api/auth/session", headers: cookie ? { cookie } : {} });
      return { status: response.statusCode, body: response.json() as unknown };
    };
    expect(await state()).toEqual({ status: 200, body: { user: null } });
    const bob = await signIn("bob");
    expect(await state(bob.cookie)).toEqual({
      status: 200,
      body: { user: { username: "bob", role: "student", sections: [] } },
    });
    await writeUsers({ tara: "ta", ivan: "instructor" });
    await eventually(
      () => me(bob.cookie),
      (status) => status === 401,
      { what: "the removed student's sign-in to be refused" },
    );
    expect(await state(bob.cookie)).toEqual({ status: 200, body: { user: null } });
  });

  it("refuses a TA whose sections changed, who signs in again with the new ones", async () => {
    await writeUsers({ tara: { role: "ta", sections: ["a"] }, ivan: "instructor" });
    await eventually(
      async () => users.find("tara")?.sections,
      (sections) => sections?.[0] === "a",
      { what: "the file with sections read" },
    );
    const tara = await signIn("tara");
    expect(await me(tara.cookie)).toBe(200);

    // Moved to another section: the old sign-in must not go on showing section "a".
    await writeUsers({ tara: { role: "ta", sections: ["b"] }, ivan: "instructor" });
    await eventually(
      () => me(tara.cookie),
      (status) => status === 401,
      { what: "the moved TA's sign-in to be refused" },
    );
    const again = await signIn("tara");
    expect((await app.inject({ url: "/api/me", headers: { cookie: again.cookie } })).json()).toEqual({
      username: "tara",
      role: "ta",
      sections: ["b"],
    });
  });

  it("keeps the users read last while the file is broken, and says so", async () => {
    const tara = await signIn("tara");
    await writeFile(file, "{ not json");
    await eventually(
      async () => warnings,
      (seen) => seen.some((message) => message.includes("not valid JSON")),
      { what: "the broken file reported" },
    );
    expect(await me(tara.cookie)).toBe(200);
    expect(users.users.map((user) => user.username)).toEqual(["tara", "bob", "ivan"]);
  });
});
