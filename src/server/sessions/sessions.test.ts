// Sessions end to end: the BFF over real HTTP against the emulator on port 0 (fast timing).
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, TestBrowser, testNamespace, type TestBff } from "../testing/test-bff.ts";
import { aLab } from "./testing/fixtures.ts";

const linuxBasics = aLab({
  id: "linux-basics",
  title: "Linux basics",
  checks: [
    {
      id: "file",
      title: "A file exists",
      points: 1,
      run: "test -f ~/done",
      timeoutSeconds: 10,
      selfCheck: true,
    },
  ],
});
const gitWorkflow = aLab({ id: "git-workflow", title: "Git workflow" });

let bff: TestBff;
let alice: TestBrowser;
let bob: TestBrowser;
let tara: TestBrowser;

beforeAll(async () => {
  // Two sessions per student, so that one person can hold both labs (the limit has its own tests).
  bff = await startTestBff({ labs: [linuxBasics, gitWorkflow], quotas: { perStudent: 2 } });
  [alice, bob, tara] = await Promise.all([bff.signIn("alice"), bff.signIn("bob"), bff.signIn("tara")]);
  await eventually(
    () => alice.get("/api/readyz"),
    (answer) => answer.status === 200,
    { what: "readyz" },
  );
});

afterAll(async () => {
  await bff?.close();
});

async function launch(browser: TestBrowser, labId: string) {
  const answer = await browser.post("/api/sessions", { labId });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body as { id: string; status: string; owner: string; labId: string; expiresAt: string };
}

describe("sessions API", () => {
  it("launches a VM that reads show at once and that reaches running", async () => {
    const before = Date.now();
    const session = await launch(alice, "linux-basics");
    expect(session).toMatchObject({ labId: "linux-basics", owner: "alice", status: "starting" });
    expect(session.id).toMatch(/^linux-basics-[a-z0-9]{8}$/);
    const expiresIn = Date.parse(session.expiresAt) - before;
    expect(expiresIn).toBeGreaterThan(59 * 60_000);
    expect(expiresIn).toBeLessThan(61 * 60_000);

    const list = await alice.get("/api/sessions");
    expect(list.body.items.map((item: { id: string }) => item.id)).toContain(session.id);

    const running = await eventually(
      () => alice.get(`/api/sessions/${session.id}`),
      (answer) => answer.body?.status === "running",
      { what: "the session to run" },
    );
    expect(running.body.phase).toBe("Running");
    expect(running.body.timeline.map((entry: { phase: string }) => entry.phase)).toContain("Running");

    // The cloud-init Secret belongs to the VM, so deleting the VM removes it too.
    const core = bff.emulator.kubeConfig.makeApiClient(CoreV1Api);
    const secret = await core.readNamespacedSecret({
      name: `${session.id}-cloudinit`,
      namespace: testNamespace,
    });
    expect(secret.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "VirtualMachine", name: session.id, uid: expect.any(String) }),
    ]);
  });

  it("allows one active session per lab and person", async () => {
    const second = await alice.post("/api/sessions", { labId: "linux-basics" });
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({
      code: "conflict",
      message: expect.stringContaining("already have"),
    });
    // Two quick clicks: the second must not slip past the check while the first is in flight.
    const clicks = await Promise.all(
      [0, 1].map(() => alice.post("/api/sessions", { labId: "git-workflow" })),
    );
    expect(clicks.map((click) => click.status).sort()).toEqual([201, 409]);
    await launch(bob, "linux-basics");
  });

  it("hides other people's sessions from students, answering 404 as for a missing one", async () => {
    const aliceList = await alice.get("/api/sessions");
    const aliceSession = aliceList.body.items[0];
    expect(aliceList.body.items.every((item: { owner: string }) => item.owner === "alice")).toBe(true);

    const fromBob = await bob.get(`/api/sessions/${aliceSession.id}`);
    const missing = await bob.get("/api/sessions/linux-basics-zzzzzzzz");
    expect(fromBob.status).toBe(404);
    expect(fromBob.body.error.code).toBe(missing.body.error.code);
    expect((await bob.delete(`/api/sessions/${aliceSession.id}`)).status).toBe(404);
    const bobList = await bob.get("/api/sessions?owner=alice");
    expect(bobList.body.total).toBe(0);
  });

  it("shows staff every session, filtered, counted, newest first and paged", async () => {
    const all = await tara.get("/api/sessions");
    expect(all.body.total).toBe(3);
    const owners = all.body.items.map((item: { owner: string }) => item.owner).sort();
    expect(owners).toEqual(["alice", "alice", "bob"]);
    const created = all.body.items.map((item: { createdAt: string }) => item.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
    expect(Object.values(all.body.counts).reduce((sum: number, n) => sum + (n as number), 0)).toBe(3);
    expect(all.body.stale).toBe(false);

    const aliceOnly = await tara.get("/api/sessions?owner=alice&lab=linux-basics");
    expect(aliceOnly.body.items).toHaveLength(1);
    const page2 = await tara.get("/api/sessions?pageSize=2&page=2");
    expect(page2.body).toMatchObject({ total: 3, page: 2, pageSize: 2 });
    expect(page2.body.items).toHaveLength(1);
    expect((await tara.get("/api/sessions?status=exploded")).status).toBe(400);
  });

  it("answers unchanged polls with 304 and serves them without asking the cluster", async () => {
    const first = await tara.get("/api/sessions");
    expect(first.headers.get("etag")).toBeTruthy();
    const [own] = (await alice.get("/api/sessions")).body.items;
    const listsBefore = bff.kubeRequests.total("list") + bff.kubeRequests.total("get");
    for (let poll = 0; poll < 20; poll += 1) {
      await tara.get("/api/sessions");
      await alice.get(`/api/sessions/${own.id}`);
    }
    expect(bff.kubeRequests.total("list") + bff.kubeRequests.total("get")).toBe(listsBefore);

    // Status changes land through the watch; poll until the list settles, then it must repeat its ETag.
    const settled = await eventually(
      async () => {
        const [a, b] = [await tara.get("/api/sessions"), await tara.get("/api/sessions")];
        return { a, b };
      },
      ({ a, b }) => a.headers.get("etag") === b.headers.get("etag"),
    );
    const unchanged = await tara.get("/api/sessions", {
      "if-none-match": settled.b.headers.get("etag") ?? "",
    });
    expect(unchanged.status).toBe(304);
    expect(unchanged.body).toBeUndefined();
    const other = await tara.get("/api/sessions?owner=bob", {
      "if-none-match": settled.b.headers.get("etag") ?? "",
    });
    expect(other.status).toBe(200);
  });

  it("ends a session: 202 stopping, then gone, and the lab can be launched again", async () => {
    const [session] = (await bob.get("/api/sessions")).body.items;
    const ended = await bob.delete(`/api/sessions/${session.id}`);
    expect(ended.status).toBe(202);
    expect(ended.body).toMatchObject({ id: session.id, status: "stopping" });
    await eventually(
      () => bob.get(`/api/sessions/${session.id}`),
      (answer) => answer.status === 404,
      { what: "the session to disappear" },
    );
    await launch(bob, "linux-basics");
  });

  it("rejects bad ids before they reach the cluster", async () => {
    const requestsBefore = bff.kubeRequests.total();
    expect((await alice.get("/api/sessions/Not_A_Name")).status).toBe(400);
    expect((await alice.get(`/api/sessions/${"a".repeat(64)}`)).status).toBe(400);
    expect((await alice.delete("/api/sessions/..%2F..%2Fsecrets")).status).toBe(400);
    const badLab = await alice.post("/api/sessions", { labId: "Linux Basics!" });
    expect(badLab.status).toBe(400);
    expect(badLab.body.error.code).toBe("invalid");
    expect((await alice.post("/api/sessions", {})).status).toBe(400);
    expect(bff.kubeRequests.total()).toBe(requestsBefore);
    const unknownLab = await alice.post("/api/sessions", { labId: "no-such-lab" });
    expect(unknownLab.status).toBe(404);
    expect(unknownLab.body.error.code).toBe("not_found");
  });

  it("lists the labs without their check commands", async () => {
    const labs = await alice.get("/api/labs");
    expect(labs.body.map((lab: { id: string }) => lab.id)).toEqual(["linux-basics", "git-workflow"]);
    expect(labs.body[0].checks).toEqual([{ id: "file", title: "A file exists", points: 1, selfCheck: true }]);
  });
});

describe("request guards", () => {
  it("refuses mutations without the CSRF header or from a foreign origin", async () => {
    const noHeader = await alice.request("POST", "/api/sessions", { labId: "git-workflow" }, {});
    expect(noHeader.status).toBe(403);
    expect(noHeader.body.error.code).toBe("csrf");
    const foreign = await alice.post(
      "/api/sessions",
      { labId: "git-workflow" },
      { origin: "https://evil.example" },
    );
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe("csrf");
    const sameOrigin = await alice.post("/api/sessions", { labId: "git-workflow" }, { origin: bff.url });
    expect(sameOrigin.status).toBe(409);
    const loginWithoutHeader = await alice.request(
      "POST",
      "/api/auth/login",
      { username: "alice", password: "demo" },
      {},
    );
    expect(loginWithoutHeader.status).toBe(403);
  });

  it("needs a signed-in user for everything but the probes", async () => {
    const stranger = new TestBrowser(bff.url);
    for (const route of ["/api/me", "/api/labs", "/api/sessions", "/api/sessions/linux-basics-aaaaaaaa"]) {
      const answer = await stranger.get(route);
      expect(answer.status, route).toBe(401);
      expect(answer.body.error.code).toBe("unauthenticated");
    }
    expect((await stranger.get("/api/healthz")).status).toBe(200);
    expect((await stranger.get("/api/nothing-here")).status).toBe(404);
  });
});

describe("sign-in", () => {
  it("signs in with an HttpOnly, SameSite=Strict signed cookie and says who you are", async () => {
    const browser = new TestBrowser(bff.url);
    const wrong = await browser.post("/api/auth/login", { username: "ivan", password: "nope" });
    expect(wrong.status).toBe(401);
    const unknown = await browser.post("/api/auth/login", { username: "mallory", password: "demo" });
    expect(unknown.body).toEqual(wrong.body);

    const response = await fetch(`${bff.url}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-lab-console": "1" },
      body: JSON.stringify({ username: "ivan", password: "demo" }),
    });
    expect(await response.json()).toEqual({ username: "ivan", role: "instructor", sections: [] });
    const cookie = response.headers.getSetCookie()[0] ?? "";
    expect(cookie).toMatch(/^lab_sign_in=[^;]+\.[^;]+;/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).not.toMatch(/Secure/i);
  });

  it("really ends the session on sign-out, even for a copy of the cookie", async () => {
    const carol = await bff.signIn("alice");
    const stolenCopy = carol.copy();
    const ended: string[] = [];
    const unsubscribe = bff.signIns.onEnded((session) => ended.push(session.user.username));
    expect((await carol.get("/api/me")).body).toEqual({
      username: "alice",
      role: "student",
      sections: ["a"],
    });

    expect((await carol.post("/api/auth/logout")).status).toBe(204);
    unsubscribe();
    expect(ended).toEqual(["alice"]);
    expect((await carol.get("/api/me")).status).toBe(401);
    expect((await stolenCopy.get("/api/me")).status).toBe(401);
  });
});

describe("direct read mode (the bench's baseline)", () => {
  it("serves the same list but asks the cluster on every poll", async () => {
    const direct = await startTestBff({
      labs: [linuxBasics, gitWorkflow],
      sessionsReadMode: "direct",
      emulator: bff.emulator,
    });
    try {
      const staff = await direct.signIn("tara");
      const cached = await tara.get("/api/sessions");
      const before = direct.kubeRequests.total("list");
      const answer = await staff.get("/api/sessions");
      expect(answer.body.total).toBe(cached.body.total);
      expect(direct.kubeRequests.total("list")).toBe(before + 2);
    } finally {
      await direct.close();
    }
  });
});

describe("when the cluster goes away", () => {
  it("keeps serving the last view marked stale, and answers writes and readyz with 503", async () => {
    await bff.emulator.emulator.close();
    await eventually(
      () => tara.get("/api/readyz"),
      (answer) => answer.status === 503,
      { what: "not ready" },
    );
    const readyz = await tara.get("/api/readyz");
    expect(readyz.body.error.code).toBe("cluster_unavailable");

    const list = await tara.get("/api/sessions");
    expect(list.status).toBe(200);
    expect(list.body.stale).toBe(true);
    expect(list.body.total).toBeGreaterThan(0);

    const launch = await bob.post("/api/sessions", { labId: "git-workflow" });
    expect(launch.status).toBe(503);
    expect(launch.body.error).toEqual({
      code: "cluster_unavailable",
      message: expect.stringContaining("cannot be reached"),
    });
  });
});
