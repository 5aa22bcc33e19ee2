// Sign-ins across restarts and replicas: test BFFs on one data folder (one ended-sign-ins.db, one
// cookie secret), started, stopped and restarted while a browser keeps its cookie.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { signInCookie } from "../console/testing/console-client.ts";
import { eventually, startTestBff, type TestBff } from "../testing/test-bff.ts";
import { encodeLoginSession } from "./current-user.ts";

let emulator: TestEmulator;
let dataDir: string;
const running: TestBff[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
});
afterAll(async () => {
  await emulator?.close();
});
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "sign-ins-"));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((bff) => bff.close()));
  await rm(dataDir, { recursive: true, force: true });
});

/** A BFF on the shared data folder: a replica, or the same console after a restart. */
async function startBff(options: { cookieSecret?: string } = {}): Promise<TestBff> {
  const bff = await startTestBff({
    labs: [],
    emulator,
    gradingDataDir: dataDir,
    signOutPollIntervalMs: 50,
    ...options,
  });
  running.push(bff);
  return bff;
}

async function stop(bff: TestBff): Promise<void> {
  running.splice(running.indexOf(bff), 1);
  await bff.close();
}

async function me(baseUrl: string, cookie: string): Promise<number> {
  const response = await fetch(`${baseUrl}/api/me`, { headers: { cookie } });
  await response.body?.cancel();
  return response.status;
}

describe("sign-ins", () => {
  it("survive a restart, hold on every replica, and end everywhere when signed out on one", async () => {
    let a = await startBff();
    const b = await startBff();
    const alice = await a.signIn("alice");
    expect((await alice.copy(b.url).get("/api/me")).body).toEqual({ username: "alice", role: "student" });

    await stop(a);
    a = await startBff();
    const aliceOnA = alice.copy(a.url);
    expect((await aliceOnA.get("/api/me")).status).toBe(200);
    const endedOnA: string[] = [];
    a.loginSessions.onEnded((session) => endedOnA.push(session.user.username));

    const aliceOnB = alice.copy(b.url);
    expect((await aliceOnB.post("/api/auth/logout")).status).toBe(204);
    expect((await alice.copy(b.url).get("/api/me")).status).toBe(401);
    await eventually(
      () => aliceOnA.get("/api/me"),
      (answer) => answer.status === 401,
      { what: "the restarted BFF to refuse the signed-out cookie" },
    );
    // A had accepted it, so whatever A holds for it (consoles, the class wall) is closed there.
    expect(endedOnA).toEqual(["alice"]);

    // The sign-out outlives every process that knew of it.
    await Promise.all([stop(a), stop(b)]);
    const c = await startBff();
    expect((await alice.copy(c.url).get("/api/me")).status).toBe(401);
  });

  it("refuse a cookie that is tampered with, of the wrong shape, expired, or signed with another secret", async () => {
    const bff = await startBff();
    const genuine = await signInCookie(bff.url, "bob");
    expect(await me(bff.url, genuine)).toBe(200);
    // The whole sign-in rides in every request: it must stay far below the 4 KB a cookie may hold.
    expect(genuine.length).toBeLessThan(300);

    const [payload, signature] = genuine.slice("lab_session=".length).split(".") as [string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    expect(claims).toEqual({
      id: expect.stringMatching(/^[\w-]{43}$/),
      user: { username: "bob", role: "student" },
      expiresAt: expect.any(Number),
    });
    const promoted = Buffer.from(
      JSON.stringify({ ...claims, user: { username: "bob", role: "instructor" } }),
    ).toString("base64url");
    expect(await me(bff.url, `lab_session=${promoted}.${signature}`)).toBe(401);

    const signed = (value: string) => `lab_session=${bff.app.signCookie(value)}`;
    const encoded = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    expect(await me(bff.url, signed("not even base64url JSON"))).toBe(401);
    expect(await me(bff.url, signed(encoded({ ...claims, user: { username: "bob", role: "root" } })))).toBe(
      401,
    );
    expect(await me(bff.url, signed(encoded({ ...claims, id: "short" })))).toBe(401);
    const expired = {
      id: randomBytes(32).toString("base64url"),
      user: { username: "bob", role: "student" as const },
      expiresAt: Date.now() - 1,
    };
    expect(await me(bff.url, signed(encodeLoginSession(expired)))).toBe(401);
    expect(
      await me(bff.url, signed(encodeLoginSession({ ...expired, expiresAt: Date.now() + 60_000 }))),
    ).toBe(200);

    // A new SESSION_SECRET signs everyone out.
    const rotated = await startBff({ cookieSecret: "another-secret-that-is-long-enough-to-sign" });
    expect(await me(rotated.url, genuine)).toBe(401);
  });
});
