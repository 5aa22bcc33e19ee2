// Sign-ins across restarts and replicas: test BFFs on one data folder (one ended-sign-ins.db, one
// cookie secret), started, stopped and restarted while a browser keeps its cookie.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, type TestBff } from "../testing/test-bff.ts";
import { encodeSignIn } from "./current-user.ts";
import { signInLifetimeMs } from "./sign-ins.ts";

const lab = aLab();
let emulator: TestEmulator;
let dataDir: string;
const running: TestBff[] = [];

beforeAll(async () => {
  // Sandboxed guests: one test watches a real console.
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
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
    labs: [lab],
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
    expect((await alice.copy(b.url).get("/api/me")).body).toEqual({
      username: "alice",
      role: "student",
      sections: ["a"],
    });

    await stop(a);
    a = await startBff();
    const aliceOnA = alice.copy(a.url);
    expect((await aliceOnA.get("/api/me")).status).toBe(200);
    const endedOnA: string[] = [];
    a.signIns.onEnded((session) => endedOnA.push(session.user.username));

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

    const [payload, signature] = genuine.slice("lab_sign_in=".length).split(".") as [string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    expect(claims).toEqual({
      id: expect.stringMatching(/^[\w-]{43}$/),
      user: { username: "bob", role: "student", sections: ["a"] },
      issuedAt: expect.any(Number),
      expiresAt: expect.any(Number),
    });
    expect(claims.expiresAt - claims.issuedAt).toBe(signInLifetimeMs);
    const promoted = Buffer.from(
      JSON.stringify({ ...claims, user: { username: "bob", role: "instructor" } }),
    ).toString("base64url");
    expect(await me(bff.url, `lab_sign_in=${promoted}.${signature}`)).toBe(401);

    const signed = (value: string) => `lab_sign_in=${bff.app.signCookie(value)}`;
    const encoded = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    expect(await me(bff.url, signed("not even base64url JSON"))).toBe(401);
    expect(await me(bff.url, signed(encoded({ ...claims, user: { username: "bob", role: "root" } })))).toBe(
      401,
    );
    expect(await me(bff.url, signed(encoded({ ...claims, id: "short" })))).toBe(401);
    // Signed before sections existed: a student in it is in none; a TA would read as a TA of the
    // whole course, so theirs no longer stands.
    expect(
      await me(bff.url, signed(encoded({ ...claims, user: { username: "bob", role: "student" } }))),
    ).toBe(200);
    // (The users file cannot tell: tara is in no section there either.)
    const tara = await signInCookie(bff.url, "tara");
    const taClaims = JSON.parse(
      Buffer.from(tara.slice("lab_sign_in=".length).split(".")[0]!, "base64url").toString("utf8"),
    );
    expect(await me(bff.url, signed(encoded(taClaims)))).toBe(200);
    const taBefore = { ...taClaims, user: { username: "tara", role: "ta" } };
    expect(await me(bff.url, signed(encoded(taBefore)))).toBe(401);
    const expired = {
      id: randomBytes(32).toString("base64url"),
      user: { username: "bob", role: "student" as const, sections: [] },
      issuedAt: Date.now() - signInLifetimeMs - 1,
      expiresAt: Date.now() - 1,
    };
    expect(await me(bff.url, signed(encodeSignIn(expired)))).toBe(401);
    expect(await me(bff.url, signed(encodeSignIn({ ...expired, expiresAt: Date.now() + 60_000 })))).toBe(200);

    // A new SESSION_SECRET signs everyone out.
    const rotated = await startBff({ cookieSecret: "another-secret-that-is-long-enough-to-sign" });
    expect(await me(rotated.url, genuine)).toBe(401);
  });
});

describe("signing one person out everywhere", () => {
  it("by an instructor ends a TA's sign-ins on every replica within a poll and closes their console", async () => {
    const a = await startBff();
    const b = await startBff();
    const launched = await (await b.signIn("alice")).post("/api/sessions", { labId: lab.id });
    expect(launched.status).toBe(201);
    const sessionId = launched.body.id as string;
    const tara = await signInCookie(a.url, "tara");
    const ivan = await a.signIn("ivan");
    await eventually(
      async () => {
        const response = await fetch(`${b.url}/api/sessions/${sessionId}`, { headers: { cookie: tara } });
        return response.ok ? ((await response.json()) as { status: string }).status : response.status;
      },
      (status) => status === "running",
      { what: "the session running in the second replica's view", timeoutMs: 20_000 },
    );
    const watching = await ConsoleTestClient.connect(b.url, sessionId, { cookie: tara, mode: "observe" });
    await watching.until(
      () => watching.lastMessage("status")?.state === "connected",
      "the watched console connected",
      20_000,
    );
    const signed = (value: unknown) =>
      `lab_sign_in=${a.app.signCookie(Buffer.from(JSON.stringify(value)).toString("base64url"))}`;
    // Made before sign-ins carried their issue time: counted as issued one lifetime before expiry.
    const olderCookie = (username: string, role: string) =>
      signed({
        id: randomBytes(32).toString("base64url"),
        user: { username, role, sections: [] },
        expiresAt: Date.now() + 60_000,
      });
    const olderTara = olderCookie("tara", "ta");
    expect(await me(b.url, olderTara)).toBe(200);

    const answer = await ivan.post("/api/admin/sign-outs", { username: "tara" });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      username: "tara",
      signedInUpTo: expect.any(String),
      keptUntil: new Date(Date.parse(answer.body.signedInUpTo) + signInLifetimeMs).toISOString(),
    });
    expect(await me(a.url, tara)).toBe(401);
    await eventually(
      () => me(b.url, tara),
      (status) => status === 401,
      { what: "the other replica to refuse the TA's sign-in" },
    );
    expect(await me(b.url, olderTara)).toBe(401);
    expect(await me(b.url, olderCookie("bob", "student"))).toBe(200);
    expect((await watching.untilClosed()).code).toBe(1000);
    expect(watching.lastMessage("ended")?.reason).toMatch(/sign in again/i);

    // A sign-in made afterwards counts: keeping someone out is the users file's or provider's job.
    expect(await me(b.url, await signInCookie(b.url, "tara"))).toBe(200);
    expect((await ivan.get("/api/me")).status).toBe(200);
    const audit = await ivan.get("/api/audit?action=sign-out-user");
    expect(audit.body.items).toEqual([
      expect.objectContaining({
        actor: "ivan",
        details: { username: "tara" },
      }),
    ]);
  });

  it("by `npm run sign-out-user` on the data folder a running console uses", async () => {
    const bff = await startBff();
    const bob = await signInCookie(bff.url, "bob");
    const run = (args: string[], env: Record<string, string>) =>
      promisify(execFile)(process.execPath, ["--import", "tsx", "src/server/cli/sign-out-user.ts", ...args], {
        env: { ...process.env, DATABASE_URL: "", ...env },
      }).then(
        ({ stdout }) => ({ code: 0, stdout, stderr: "" }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );

    const done = await run(["bob"], { DATA_DIR: dataDir });
    expect(done).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Signed bob out: /) });
    await eventually(
      () => me(bff.url, bob),
      (status) => status === 401,
      { what: "the running console to refuse bob's sign-in" },
    );
    const staff = await bff.signIn("ivan");
    const audit = await staff.get("/api/audit?action=sign-out-user");
    expect(audit.body.items).toEqual([
      expect.objectContaining({ actor: "system", details: expect.objectContaining({ username: "bob" }) }),
    ]);

    expect(await run([], { DATA_DIR: dataDir })).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/name one person/),
    });
    expect(await run(["bob"], { DATA_DIR: path.join(dataDir, "mistyped") })).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/does not exist/),
    });
  });
});
