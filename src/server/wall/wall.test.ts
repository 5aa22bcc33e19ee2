// The class wall and raised hands over real sockets: a staff wall socket and students' consoles ->
// BFF -> the emulator's KubeVirt consoles -> bash in sandboxed guests.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { launchRunning, startTestBff, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { refusedWallStatus, WallTestClient } from "./testing/wall-client.ts";

const labId = "wall-lab";
let emulator: TestEmulator;
let bff: TestBff;
const sockets: { close(): void }[] = [];
let alice: TestBrowser;
let bob: TestBrowser;
let tara: TestBrowser;
let aliceSession: string;
let bobSession: string;
const cookies: Record<string, string> = {};

async function openWall(who = "tara"): Promise<WallTestClient> {
  const wall = await WallTestClient.connect(bff.url, labId, { cookie: cookies[who] });
  sockets.push(wall);
  return wall;
}

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({
    labs: [aLab({ id: labId, title: "Wall lab" })],
    emulator,
    wallTiming: { screenIntervalMs: 100, listIntervalMs: 200 },
  });
  [alice, bob, tara] = await Promise.all([bff.signIn("alice"), bff.signIn("bob"), bff.signIn("tara")]);
  for (const name of ["alice", "bob", "tara", "tom", "ivan"])
    cookies[name] = await signInCookie(bff.url, name);
  [aliceSession, bobSession] = await Promise.all([launchRunning(alice, labId), launchRunning(bob, labId)]);
});

afterAll(async () => {
  for (const socket of sockets) socket.close();
  await bff?.close();
  await emulator?.close();
});

describe("the class wall", () => {
  it("shows every running session of the lab, keeping their consoles open without a viewer", async () => {
    const wall = await openWall();
    await wall.until(
      () => [aliceSession, bobSession].every((id) => wall.session(id)?.status === "running"),
      "both sessions running",
    );
    expect(wall.session(aliceSession)).toMatchObject({ owner: "alice", help: null, score: null });
    // Nobody opened a console: the wall alone holds one line per VM, and their screens arrive.
    await eventually(
      async () => bff.app.consoleHub.stats(),
      (stats) => stats.connectedUpstreams === 2 && stats.viewers === 0,
      { what: "two upstreams kept open by the wall" },
    );
    await wall.until(() => wall.screens.has(aliceSession) && wall.screens.has(bobSession), "both screens");
    expect(wall.screens.get(aliceSession)?.rows).toHaveLength(24);
  });

  it("shows what the student's console shows, as they type", async () => {
    const wall = await openWall();
    const console = await ConsoleTestClient.connect(bff.url, aliceSession, { cookie: cookies.alice });
    sockets.push(console);
    await console.until(() => console.lastMessage("status")?.state === "connected", "connected", 20_000);
    console.type("echo wa''ll-typed\r");
    await console.untilScreenShows("wall-typed");
    // The same 80x24 screen both ways, once both have caught up with the output.
    const visible = () => console.screen().split("\n").slice(-24);
    await wall.until(
      () => JSON.stringify(wall.screens.get(aliceSession)?.rows) === JSON.stringify(visible()),
      "the console's exact screen",
    );
    expect(wall.screens.get(aliceSession)?.rows.join("\n")).toContain("wall-typed");
    // Changed screens only: a frame for Bob (his VM may still be booting) always differs from the last.
    let bob = wall.screens.get(bobSession);
    const bobScreens = [JSON.stringify(bob)];
    console.type("echo again''\r");
    await wall.until(() => {
      const latest = wall.screens.get(bobSession);
      if (latest !== bob) bobScreens.push(JSON.stringify((bob = latest)));
      return wall.screens.get(aliceSession)?.rows.join("\n").includes("again") ?? false;
    }, "again");
    for (let index = 1; index < bobScreens.length; index += 1) {
      expect(bobScreens[index]).not.toBe(bobScreens[index - 1]);
    }
  });

  it("is refused to students, foreign pages, strangers and unknown labs", async () => {
    expect(await refusedWallStatus(bff.url, labId, { cookie: cookies.alice })).toBe(403);
    expect(
      await refusedWallStatus(bff.url, labId, { cookie: cookies.tara, origin: "https://evil.example" }),
    ).toBe(403);
    expect(await refusedWallStatus(bff.url, labId, {})).toBe(401);
    expect(await refusedWallStatus(bff.url, "no-such-lab", { cookie: cookies.tara })).toBe(404);
    const plain = await fetch(`${bff.url}/api/labs/${labId}/wall`, { headers: { cookie: cookies.tara! } });
    expect(plain.status).toBe(426);
  });
  it("opens at most three walls of one person at once, and says so to a fourth", async () => {
    const walls = [await openWall("ivan"), await openWall("ivan"), await openWall("ivan")];
    for (const wall of walls) await wall.until(() => wall.sessions.length > 0, "the wall's sessions");
    const fourth = await openWall("ivan");
    await fourth.until(() => fourth.closedWith !== undefined, "the fourth wall closed");
    expect(fourth.refused).toEqual({ type: "refused", reason: "too_many_walls", limit: 3 });
    expect(fourth.frames).toBe(1);
    // Another person's walls are theirs to count.
    const tomsWall = await openWall("tom");
    await tomsWall.until(() => tomsWall.closedWith !== undefined || tomsWall.frames > 0, "tom's wall");
    expect(tomsWall.refused).toBeUndefined();
    // One closed, one more may open.
    walls[0]!.close();
    await walls[0]!.until(() => walls[0]!.closedWith !== undefined, "the first wall closed");
    await eventually(
      async () => {
        const again = await openWall("ivan");
        await again.until(() => again.sessions.length > 0 || again.closedWith !== undefined, "an answer");
        return again;
      },
      (again) => again.sessions.length > 0,
      { what: "a wall in the closed one's place" },
    );
  });
});

describe("raised hands", () => {
  it("reach the TA's wall and sessions list within a poll, are acknowledged, and are audited", async () => {
    const wall = await openWall();
    const raised = await alice.post(`/api/sessions/${aliceSession}/help`, { note: "ls says no such file" });
    expect(raised.status, JSON.stringify(raised.body)).toBe(200);
    expect(raised.body.help).toMatchObject({ note: "ls says no such file", acknowledgedBy: null });

    await wall.until(() => wall.session(aliceSession)?.help?.note === "ls says no such file", "the hand");
    const list = await tara.get(`/api/sessions?lab=${labId}`);
    const listed = (list.body.items as { id: string; help?: { note: string } }[]).find(
      (item) => item.id === aliceSession,
    );
    expect(listed?.help?.note).toBe("ls says no such file");

    expect((await bob.post(`/api/sessions/${bobSession}/help/acknowledge`)).status).toBe(403);
    expect((await tara.post(`/api/sessions/${aliceSession}/help`, { note: "x" })).status).toBe(403);
    expect((await tara.post(`/api/sessions/${bobSession}/help/acknowledge`)).status).toBe(409);
    const answered = await tara.post(`/api/sessions/${aliceSession}/help/acknowledge`);
    expect(answered.status).toBe(200);
    await wall.until(() => wall.session(aliceSession)?.help?.acknowledgedBy === "tara", "the answer");

    const lowered = await alice.delete(`/api/sessions/${aliceSession}/help`);
    expect(lowered.status).toBe(200);
    await wall.until(() => wall.session(aliceSession)?.help === null, "the hand lowered");

    const ivan = await bff.signIn("ivan");
    const audit = await ivan.get(`/api/audit?session=${aliceSession}`);
    const actions = (audit.body.items as { action: string; actor: string }[]).map(
      (entry) => `${entry.actor} ${entry.action}`,
    );
    expect(actions).toEqual(expect.arrayContaining(["alice raise-hand", "tara acknowledge-hand"]));
  });
});
