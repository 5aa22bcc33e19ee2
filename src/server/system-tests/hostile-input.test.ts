// What a hostile browser, script or lab author can throw at the BFF: forged cross-site requests and
// websockets, planted and tampered cookies, huge bodies and frames, path tricks in ids, hostile lab
// files, and floods of sign-ins, launches and self-checks.
import { mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { csrfHeader } from "../../common/api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { encodeSignIn } from "../auth/current-user.ts";
import { refusedStatus, signInCookie } from "../console/testing/console-client.ts";
import { aCheck, aGradingLab } from "../grading/testing/grading-fixtures.ts";
import { defaultVmSizes, loadLabs } from "../labs/load-labs.ts";
import { patient, eventually } from "../../common/testing/patience.ts";
import { startTestBff, TestBrowser, type TestBff } from "../testing/test-bff.ts";
import { adminCluster, createSessionVm } from "./testing/cluster-sessions.ts";
import { routeKey, routeTable } from "./testing/route-table.ts";

const lab = aGradingLab([aCheck({ id: "hello", run: "true", selfCheck: true })]);
/** Labs of their own for launches sent at once (one session per lab and person). */
const burstLabs = Array.from({ length: 11 }, (_, index) => ({ ...lab, id: `burst-${index}` }));

let emulator: TestEmulator;
let bff: TestBff;
/** alice's session: Halted, so it exists without a guest to boot. */
let sessionId: string;

beforeAll(async () => {
  emulator = await startTestEmulator({ deployRbac: true });
  bff = await startTestBff({ labs: [lab, ...burstLabs], emulator, quotas: { perStudent: 20 } });
  sessionId = await createSessionVm(adminCluster(emulator), lab, "alice", { runStrategy: "Halted" });
  const alice = await bff.signIn("alice");
  await eventually(
    () => alice.get(`/api/sessions/${sessionId}`),
    (answer) => answer.status === 200,
    { what: "alice's session in the BFF's view" },
  );
});

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

/** A request exactly as written: no client normalizes the path on the way. */
function rawGet(
  pathAsWritten: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const { port } = new URL(bff.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: "127.0.0.1", port, path: pathAsWritten, headers }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
    request.end();
  });
}

function cookieOf(username: string): string {
  const login = bff.signIns.create({
    username,
    role: username === "ivan" ? "instructor" : "student",
    sections: [],
  });
  return `lab_sign_in=${bff.app.signCookie(encodeSignIn(login))}`;
}

describe("cross-site requests", () => {
  it("refuses every mutation route without the CSRF header, or from a foreign origin", async () => {
    const mutations = routeTable(bff.app).filter((route) => !["GET", "HEAD"].includes(route.method));
    expect(mutations.length).toBeGreaterThan(5);
    const slipped: string[] = [];
    for (const route of mutations) {
      const url =
        bff.url + route.url.replace(":id", sessionId).replace(":labId", lab.id).replace(":runId", "x");
      const headers = { cookie: cookieOf("ivan"), "content-type": "application/json" };
      const body = JSON.stringify({ labId: lab.id, username: "alice", password: "demo" });
      const bare = await fetch(url, { method: route.method, headers, body });
      const foreign = await fetch(url, {
        method: route.method,
        headers: { ...headers, [csrfHeader.name]: csrfHeader.value, origin: "https://evil.example" },
        body,
      });
      for (const [how, answer] of [
        ["without the header", bare],
        ["from evil.example", foreign],
      ] as const) {
        const error = (await answer.json()) as { error?: { code?: string } };
        if (answer.status !== 403 || error.error?.code !== "csrf")
          slipped.push(`${routeKey(route)} ${how}: ${answer.status}`);
      }
    }
    expect(slipped).toEqual([]);
  });

  it("opens a console only from the console's own origin", async () => {
    const cookie = await signInCookie(bff.url, "alice");
    expect(await refusedStatus(bff.url, sessionId, { cookie, origin: "https://evil.example" })).toBe(403);
    expect(await refusedStatus(bff.url, sessionId, { cookie, origin: null })).toBe(403);
    expect(await refusedStatus(bff.url, sessionId, { cookie, origin: "null" })).toBe(403);
    // The same origin on another port is another origin.
    const otherPort = new URL(bff.url);
    otherPort.port = String(Number(otherPort.port) + 1);
    expect(await refusedStatus(bff.url, sessionId, { cookie, origin: otherPort.origin })).toBe(403);
    // Not an upgrade at all: nothing to see either.
    expect((await rawGet(`/api/sessions/${sessionId}/console`, { cookie })).status).toBe(426);
  });
});

describe("the sign-in cookie", () => {
  it("is HttpOnly, SameSite=Strict, signed, site-wide and not Secure over plain HTTP, whatever a header claims (so is the device note)", async () => {
    const response = await fetch(`${bff.url}/api/auth/login`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [csrfHeader.name]: csrfHeader.value,
        // trustProxy is off: a client cannot talk the BFF into believing it came over HTTPS.
        "x-forwarded-proto": "https",
      },
      body: JSON.stringify({ username: "bob", password: "demo" }),
    });
    expect(response.status).toBe(200);
    const cookies = response.headers.getSetCookie();
    expect(cookies.map((cookie) => cookie.split("=")[0])).toEqual(["lab_sign_in", "lab_known_device"]);
    const [session, device] = cookies.map((cookie) =>
      cookie.split(";").map((part) => part.trim().toLowerCase()),
    ) as [string[], string[]];
    expect(session[0]).toMatch(/^lab_sign_in=[a-z0-9_-]+\.[a-z0-9%+/=_-]+$/i);
    expect(session).toEqual(expect.arrayContaining(["httponly", "samesite=strict", "path=/"]));
    expect(session.some((attribute) => attribute.startsWith("expires="))).toBe(true);
    // The sign-in limiter's note that this browser signed in as bob: signed, and sent to sign-in only.
    expect(device[0]).toMatch(/^lab_known_device=bob\.[a-z0-9%+/=_-]+$/i);
    expect(device).toEqual(expect.arrayContaining(["httponly", "samesite=strict", "path=/api/auth/login"]));
    for (const attributes of [session, device]) expect(attributes).not.toContain("secure");
  });

  it("is worthless when tampered with, and rotated at sign-in so a planted one is never promoted", async () => {
    const genuine = await signInCookie(bff.url, "bob");
    const [name, value] = genuine.split("=") as [string, string];
    const [id, signature] = value.split(".") as [string, string];
    const flipped = `${id.slice(0, -1)}${id.endsWith("A") ? "B" : "A"}.${signature}`;
    for (const cookie of [`${name}=${flipped}`, `${name}=${id}`, `${name}=${id}.`]) {
      expect((await rawGet("/api/me", { cookie })).status).toBe(401);
    }

    // Mallory plants her own valid sign-in in Alice's browser; Alice then signs in.
    const planted = await signInCookie(bff.url, "bob");
    const victim = new TestBrowser(bff.url);
    const answer = await fetch(`${bff.url}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", [csrfHeader.name]: csrfHeader.value, cookie: planted },
      body: JSON.stringify({ username: "alice", password: "demo" }),
    });
    expect(answer.status).toBe(200);
    const issued = answer.headers.getSetCookie()[0]?.split(";")[0];
    expect(issued).toBeDefined();
    expect(issued).not.toBe(planted);
    // The planted cookie is now signed out: it never becomes Alice's session.
    expect((await rawGet("/api/me", { cookie: planted })).status).toBe(401);
    expect(JSON.parse((await rawGet("/api/me", { cookie: issued! })).body)).toEqual({
      username: "alice",
      role: "student",
      sections: ["a"],
    });
    expect((await victim.get("/api/me")).status).toBe(401);
  });
});

describe("oversized input", () => {
  it("refuses bodies over 1 MiB with 413 before any work", async () => {
    const alice = await bff.signIn("alice");
    const huge = { labId: lab.id, padding: "x".repeat(2 * 1024 * 1024) };
    for (const target of ["/api/sessions", "/api/auth/login", `/api/labs/${lab.id}/grading-runs`]) {
      const answer = await alice.post(target, huge);
      expect(answer.status, target).toBe(413);
      expect(answer.body.error.code).toBe("invalid");
    }
  });

  it("closes a console whose browser sends a frame over 64 KiB (1009)", async () => {
    // A running VM, so that the console stays open until the frame arrives.
    const running = await createSessionVm(adminCluster(emulator), lab, "alice");
    const alice = await bff.signIn("alice");
    await eventually(
      () => alice.get(`/api/sessions/${running}`),
      (answer) => answer.body?.status === "running",
      { what: "alice's second session running" },
    );
    const url = `${bff.url.replace(/^http/, "ws")}/api/sessions/${running}/console`;
    const socket = new WebSocket(url, { headers: { cookie: cookieOf("alice"), origin: bff.url } });
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    socket.once("open", () => socket.send(Buffer.alloc(65 * 1024, 0x61), { binary: true }));
    expect(await closed).toBe(1009);
  });
});

describe("path tricks in ids", () => {
  it("answers 400 or 404 for ids that are not ids, and asks the cluster nothing", async () => {
    const cookie = cookieOf("ivan");
    const before = bff.kubeRequests.total();
    const tricks = [
      "/api/sessions/..",
      "/api/sessions/%2e%2e",
      "/api/sessions/..%2f..%2fapi%2fme",
      "/api/sessions/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
      "/api/sessions/a%00b",
      "/api/sessions/a%0d%0aSet-Cookie:%20x=1",
      "/api/sessions/UPPER",
      "/api/sessions/-leading",
      "/api/sessions/trailing-",
      `/api/sessions/${"a".repeat(64)}`,
      "/api/sessions/%EF%BD%81",
      "/api/sessions/a%20b",
      "/api/sessions/..%5c..%5cwindows",
      `/api/sessions/${sessionId}%2f..%2f..%2fcapacity`,
      "/api/labs/..%2f..%2fetc/grades.csv",
      "/api/labs/%2e%2e/grading-runs",
      `/api/labs/${"x".repeat(41)}/grades.json`,
      "/api/grading-runs/..%2f..",
      "/api/grading-runs/%00",
      "/api/sessions/../../../../etc/passwd",
    ];
    const answers = await Promise.all(tricks.map((trick) => rawGet(trick, { cookie })));
    const wrong = tricks.filter((_, index) => ![400, 404].includes(answers[index]!.status));
    expect(wrong).toEqual([]);
    for (const answer of answers) expect(JSON.parse(answer.body).error.message).toEqual(expect.any(String));
    expect(bff.kubeRequests.total()).toBe(before);

    const ivan = await bff.signIn("ivan");
    for (const labId of ["../../etc/passwd", "linux-basics/../x", "LINUX", "a".repeat(41), ""]) {
      const launch = await ivan.post("/api/sessions", { labId });
      expect(launch.status, labId).toBe(400);
    }
    const run = await ivan.post(`/api/labs/${lab.id}/grading-runs`, {
      sessionIds: ["../../x", "a".repeat(200)],
    });
    expect(run.status).toBe(400);
    expect(bff.kubeRequests.total()).toBe(before);
  });
});

describe("hostile lab files", () => {
  it("loads the good lab beside huge, deeply nested and alias-bomb files, quickly and in little memory", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "hostile-labs-"));
    try {
      await writeFile(
        path.join(dir, "good.yaml"),
        "id: good-lab\ntitle: Good lab\nvm:\n  size: small\n  image: quay.io/containerdisks/fedora:41\n",
      );
      // 4 GiB that costs no disk: only the size is ever looked at.
      await writeFile(path.join(dir, "huge.yaml"), "id: huge\n");
      await truncate(path.join(dir, "huge.yaml"), 4 * 1024 ** 3);
      await writeFile(path.join(dir, "nested.yaml"), `id: nested\ndescription: ${"[".repeat(100_000)}\n`);
      const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
      for (let level = 1; level < 10; level += 1) {
        const previous = String.fromCharCode(96 + level);
        const name = String.fromCharCode(97 + level);
        laughs.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(",")}]`);
      }
      await writeFile(path.join(dir, "bomb.yaml"), `id: bomb\n${laughs.join("\n")}\n`);

      const heapBefore = process.memoryUsage().heapUsed;
      const started = performance.now();
      const { labs, problems } = loadLabs(dir, defaultVmSizes);
      const elapsedMs = performance.now() - started;
      expect(labs.map((each) => each.id)).toEqual(["good-lab"]);
      expect(problems.map((problem) => path.basename(problem.file)).sort()).toEqual([
        "bomb.yaml",
        "huge.yaml",
        "nested.yaml",
      ]);
      expect(elapsedMs).toBeLessThan(patient(5_000));
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200 * 1024 * 1024);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("rate limits", () => {
  it("slows password guessing on one name, with Retry-After, while others sign in", async () => {
    const guesser = new TestBrowser(bff.url);
    for (let attempt = 0; attempt < 10; attempt += 1) {
      expect(
        (await guesser.post("/api/auth/login", { username: "tara", password: `guess-${attempt}` })).status,
      ).toBe(401);
    }
    const limited = await guesser.post("/api/auth/login", { username: "tara", password: "demo" });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toEqual({
      code: "rate_limited",
      message: expect.stringMatching(/^Too many sign-in attempts\. Try again in \d+ s\.$/),
      reason: "sign_in_too_often",
      params: { seconds: Number(limited.headers.get("retry-after")) },
    });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Another person signs in from the same address as usual.
    expect((await guesser.post("/api/auth/login", { username: "bob", password: "demo" })).status).toBe(200);
  });

  it("limits how fast one person launches VMs, even with every launch sent at once", async () => {
    const ivan = await bff.signIn("ivan");
    const answers = await Promise.all(
      burstLabs.map((burstLab) => ivan.post("/api/sessions", { labId: burstLab.id })),
    );
    for (const answer of answers) {
      if (answer.status === 201) {
        expect((await ivan.delete(`/api/sessions/${answer.body.id}`)).status).toBe(202);
      } else {
        expect(answer.body.error).toEqual({
          code: "rate_limited",
          message: expect.stringMatching(/^You started sessions too quickly\. Try again in \d+ s\.$/),
          reason: "launch_too_often",
          params: { seconds: Number(answer.headers.get("retry-after")) },
        });
        expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      }
    }
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(10).fill(201), 429]);
    // Someone else launches as usual.
    const bob = await bff.signIn("bob");
    expect((await bob.post("/api/sessions", { labId: lab.id })).status).toBe(201);
  });

  it("allows one self-check per session every 10 s", async () => {
    const alice = await bff.signIn("alice");
    expect((await alice.post(`/api/sessions/${sessionId}/checks`)).status).toBe(201);
    const again = await alice.post(`/api/sessions/${sessionId}/checks`);
    expect(again.status).toBe(429);
    expect(again.body.error.code).toBe("rate_limited");
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThanOrEqual(9);
  });
});
