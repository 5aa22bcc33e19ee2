// The console over real sockets: browsers (ws clients with the SPA's protocol) -> BFF -> the
// emulator's KubeVirt console -> a bash in a sandboxed guest.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditEntry } from "../../common/operations-api.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { launchRunning, startTestBff, testNamespace, type TestBff } from "../testing/test-bff.ts";
import { ConsoleTestClient, refusedStatus, signInCookie } from "./testing/console-client.ts";

const labs = ["lab-one", "lab-two", "lab-three", "lab-four"].map((id) => aLab({ id, title: id }));

let emulator: TestEmulator;
let bff: TestBff;
/** A second BFF on the same emulator with tight limits and short timers (its own sessions). */
let tight: TestBff;
type Person = "alice" | "bob" | "tara" | "ivan";
/** Sign-ins are per BFF: each has its own login sessions. */
const cookieJars = new Map<TestBff, Record<Person, string>>();

async function signInEveryone(target: TestBff): Promise<void> {
  const people: Person[] = ["alice", "bob", "tara", "ivan"];
  const cookies = await Promise.all(people.map((person) => signInCookie(target.url, person)));
  cookieJars.set(
    target,
    Object.fromEntries(people.map((person, index) => [person, cookies[index]!])) as Record<Person, string>,
  );
}

function cookieOf(person: Person, target: TestBff = bff): string {
  return cookieJars.get(target)![person];
}
const clients: ConsoleTestClient[] = [];
const metricsToken = "a-metrics-token-for-console-tests";

/** lab_console_console_upstream_reconnects_total as /metrics shows it (absent until the first). */
async function upstreamReconnects(): Promise<number> {
  const answer = await fetch(`${bff.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
  expect(answer.status).toBe(200);
  const line = /^lab_console_console_upstream_reconnects_total (\d+)$/m.exec(await answer.text());
  return Number(line?.[1] ?? 0);
}

async function open(
  sessionId: string,
  who: Person,
  options: { mode?: "observe"; ack?: boolean; target?: TestBff } = {},
): Promise<ConsoleTestClient> {
  const target = options.target ?? bff;
  const client = await ConsoleTestClient.connect(target.url, sessionId, {
    cookie: cookieOf(who, target),
    mode: options.mode,
    ack: options.ack,
  });
  clients.push(client);
  // Keystrokes before the VM's console is connected would go nowhere.
  await client.untilLive();
  return client;
}

/** Runs a command typed by `client`; `echo a''b` prints "ab", so the echoed input never matches. */
function run(client: ConsoleTestClient, command: string): void {
  client.type(`${command}\r`);
}

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({
    labs,
    emulator,
    consoleLimits: { reconnectInitialMs: 50, notRunningRetryMs: 100 },
    metricsToken,
  });
  tight = await startTestBff({
    labs,
    emulator,
    consoleLimits: {
      lingerMs: 300,
      pingIntervalMs: 500,
      highWatermarkBytes: 64 * 1024,
      lowWatermarkBytes: 16 * 1024,
      observerMaxBehindBytes: 256 * 1024,
    },
  });
  await Promise.all([signInEveryone(bff), signInEveryone(tight)]);
});

afterAll(async () => {
  for (const client of clients) client.close();
  await bff?.close();
  await tight?.close();
  await emulator?.close();
});

describe("the console of a running session", () => {
  let sessionId: string;

  beforeAll(async () => {
    sessionId = await launchRunning(await bff.signIn("alice"), "lab-one");
  });

  it("shares one VM connection between the owner and an observer; the observer cannot type", async () => {
    const alice = await open(sessionId, "alice");
    const tara = await open(sessionId, "tara", { mode: "observe" });
    await alice.until(() => alice.lastMessage("status")?.state === "connected", "connected");

    run(alice, "echo he''llo-lab");
    await alice.untilScreenShows("hello-lab");
    await tara.untilScreenShows("hello-lab");

    run(tara, "echo ta''-typed");
    run(alice, "echo after''-observer");
    await alice.untilScreenShows("after-observer");
    await tara.untilScreenShows("after-observer");
    expect(alice.screen()).not.toContain("ta''-typed");
    expect(tara.lastMessage("keyboard")).toMatchObject({ holder: "alice", canType: false, canTake: true });
    expect(bff.app.consoleHub.stats()).toMatchObject({ consoles: 1, connectedUpstreams: 1, viewers: 2 });
  });

  it("lets a TA take the keyboard, shows the student who has it, and gives it back on request", async () => {
    const alice = await open(sessionId, "alice");
    const tara = await open(sessionId, "tara", { mode: "observe" });
    const ivan = await bff.signIn("ivan");
    const keyboardTakes = async (count: number) =>
      (
        await eventually(
          () => ivan.get(`/api/audit?action=take-keyboard&session=${sessionId}`),
          (answer) => answer.body.items.length >= count,
          { what: `${count} keyboard take(s) in the audit log` },
        )
      ).body.items as AuditEntry[];

    tara.send({ type: "take-keyboard" });
    await alice.until(() => alice.lastMessage("keyboard")?.holder === "tara", "tara holding the keyboard");
    expect(alice.lastMessage("keyboard")).toMatchObject({
      holderIsOwner: false,
      canType: false,
      canTake: true,
    });
    await tara.until(() => tara.lastMessage("keyboard")?.canType === true, "tara allowed to type");

    run(alice, "echo alice''-blocked");
    run(tara, "echo tara''-typing");
    await alice.untilScreenShows("tara-typing");
    expect(alice.screen()).not.toContain("alice''-blocked");

    alice.send({ type: "take-keyboard" });
    await alice.until(() => alice.lastMessage("keyboard")?.canType === true, "alice typing again");
    await tara.until(() => tara.lastMessage("keyboard")?.canType === false, "tara read-only again");

    // Staff taking the keyboard is audited by the BFF; the owner taking it back is not.
    const taraTakes = {
      actor: "tara",
      actorRole: "ta",
      sessionId,
      labId: "lab-one",
      owner: "alice",
      details: { from: "alice" },
    };
    expect(await keyboardTakes(1)).toEqual([expect.objectContaining(taraTakes)]);
    tara.send({ type: "take-keyboard" });
    expect(await keyboardTakes(2)).toEqual([
      expect.objectContaining(taraTakes),
      expect.objectContaining(taraTakes),
    ]);
    alice.send({ type: "take-keyboard" });
    await alice.until(() => alice.lastMessage("keyboard")?.canType === true, "alice typing once more");
  });

  it("replays the screen once to a viewer that rejoins, then goes on live", async () => {
    const first = await open(sessionId, "alice");
    run(first, "echo mark''-once");
    await first.untilScreenShows("mark-once");
    first.close();

    const again = await open(sessionId, "alice");
    expect(again.lastMessage("replay-begin")).toEqual({ type: "replay-begin", fresh: false });
    expect(again.screen()).toContain("mark-once");
    run(again, "echo after''-rejoin");
    await again.untilScreenShows("after-rejoin");
    expect(again.rowsContaining("mark-once")).toBe(1);
  });

  it("re-establishes the VM connection the emulator cut; viewers stay connected", async () => {
    const alice = await open(sessionId, "alice");
    await alice.until(() => alice.lastMessage("status")?.state === "connected", "connected");
    const seen = alice.messages.length;
    // The first connection is not a reconnect.
    expect(await upstreamReconnects()).toBe(0);

    expect(emulator.emulator.faults.cutConsole(testNamespace, sessionId)).toBe(true);
    await alice.until(
      () => alice.messages.slice(seen).some((m) => m.type === "status" && m.state === "reconnecting"),
      "reconnecting",
    );
    await alice.until(() => alice.lastMessage("status")?.state === "connected", "connected again");
    run(alice, "echo back''-again");
    await alice.untilScreenShows("back-again");
    expect(alice.closedWith).toBeUndefined();
    expect(await upstreamReconnects()).toBe(1);

    // Every reconnect counts, not only a console's first.
    const seenBeforeSecondCut = alice.messages.length;
    expect(emulator.emulator.faults.cutConsole(testNamespace, sessionId)).toBe(true);
    await alice.until(
      () =>
        alice.messages
          .slice(seenBeforeSecondCut)
          .some((m) => m.type === "status" && m.state === "reconnecting") &&
        alice.lastMessage("status")?.state === "connected",
      "reconnected after the second cut",
    );
    expect(await upstreamReconnects()).toBe(2);
  });

  it("closes the sockets of a sign-in that signs out", async () => {
    const secondSignIn = await signInCookie(bff.url, "alice");
    const client = await ConsoleTestClient.connect(bff.url, sessionId, { cookie: secondSignIn });
    clients.push(client);
    await fetch(`${bff.url}/api/auth/logout`, {
      method: "POST",
      headers: { cookie: secondSignIn, "x-lab-console": "1" },
    });
    expect((await client.untilClosed()).code).toBe(1000);
    expect(client.lastMessage("ended")?.reason).toMatch(/sign-in ended/);
  });
});

describe("who may open a console", () => {
  let sessionId: string;

  beforeAll(async () => {
    sessionId = await launchRunning(await bff.signIn("bob"), "lab-one");
  });

  it("refuses a foreign or missing Origin, a missing cookie, another student and staff not observing", async () => {
    const url = bff.url;
    expect(
      await refusedStatus(url, sessionId, { cookie: cookieOf("bob"), origin: "https://evil.example" }),
    ).toBe(403);
    expect(await refusedStatus(url, sessionId, { cookie: cookieOf("bob"), origin: null })).toBe(403);
    expect(await refusedStatus(url, sessionId, {})).toBe(401);
    expect(await refusedStatus(url, sessionId, { cookie: cookieOf("alice") })).toBe(404);
    expect(await refusedStatus(url, sessionId, { cookie: cookieOf("alice"), mode: "observe" })).toBe(404);
    expect(await refusedStatus(url, sessionId, { cookie: cookieOf("tara") })).toBe(403);
    const plainGet = await fetch(`${url}/api/sessions/${sessionId}/console`, {
      headers: { cookie: cookieOf("bob") },
    });
    expect(plainGet.status).toBe(426);
  });

  it("ends the console with the reason when the VM is deleted", async () => {
    const owner = await open(sessionId, "bob");
    const observer = await open(sessionId, "tara", { mode: "observe" });
    await owner.until(() => owner.lastMessage("status")?.state === "connected", "connected");

    const deleted = await fetch(`${bff.url}/api/sessions/${sessionId}`, {
      method: "DELETE",
      headers: { cookie: cookieOf("bob"), "x-lab-console": "1" },
    });
    expect(deleted.status).toBe(202);
    for (const client of [owner, observer]) {
      expect((await client.untilClosed()).code).toBe(1000);
      expect(client.lastMessage("ended")?.reason).toMatch(/^This session has ended/);
    }
  });
});

describe("a guest that crashes under runStrategy Always", () => {
  it("keeps the session and its consoles while KubeVirt replaces the VMI, then goes on in the new VM", async () => {
    // An instructor's own session: the students here already hold their per-student places.
    const browser = await bff.signIn("ivan");
    const sessionId = await launchRunning(browser, "lab-four");
    const owner = await open(sessionId, "ivan");
    const observer = await open(sessionId, "tara", { mode: "observe" });
    const seen = owner.messages.length;

    expect(await emulator.emulator.faults.killGuest(testNamespace, sessionId)).toBe(true);
    await owner.until(
      () => owner.messages.slice(seen).some((m) => m.type === "status" && m.state === "reconnecting"),
      "the console to wait for the new VMI",
    );
    const during = await browser.get(`/api/sessions/${sessionId}`);
    expect(during.body.status).not.toBe("failed");
    await owner.until(
      () => owner.lastMessage("status")?.state === "connected",
      "connected to the new VMI",
      20_000,
    );
    run(owner, "echo after''-the-crash");
    await owner.untilScreenShows("after-the-crash");
    await observer.untilScreenShows("after-the-crash");
    expect(owner.closedWith).toBeUndefined();
    expect(observer.closedWith).toBeUndefined();
    expect((await browser.get(`/api/sessions/${sessionId}`)).body.status).toBe("running");
  });
});

describe("a console opened while its VM starts", () => {
  it("waits for the VM to run, then connects", async () => {
    const browser = await bff.signIn("bob");
    const created = await browser.post("/api/sessions", { labId: "lab-two" });
    expect(created.status).toBe(201);
    const bob = await open(created.body.id, "bob");
    await bob.until(() => bob.lastMessage("status")?.state === "connected", "connected", 20_000);
    const statuses = bob.messages.filter((message) => message.type === "status");
    expect(statuses.slice(0, -1).every((message) => message.state === "connecting")).toBe(true);
    run(bob, "echo first''-words");
    await bob.untilScreenShows("first-words");
  });
});

// A student has one session at a time: here the owner is a TA (staff launch labs too) and the
// observer an instructor.
describe("flow control and timers", () => {
  let sessionId: string;

  beforeAll(async () => {
    sessionId = await launchRunning(await tight.signIn("tara"), "lab-three");
  });

  it("drops an observer that stops reading, while the owner goes on", async () => {
    const alice = await open(sessionId, "tara", { target: tight });
    const stuck = await open(sessionId, "ivan", { mode: "observe", ack: false, target: tight });
    run(alice, "seq 1 300000; echo seq''-done");
    expect((await stuck.untilClosed()).code).toBe(4008);
    await alice.untilScreenShows("seq-done", 30_000);
    expect(alice.closedWith).toBeUndefined();
  });

  it("holds back output from an owner's tab that stops reading, then brings it up to date", async () => {
    const frozen = await open(sessionId, "tara", { ack: false, target: tight });
    const tara = await open(sessionId, "tara", { target: tight });
    run(tara, "seq 1 5000000");
    // The VM goes on for the reading tab while the frozen one gets nothing past the watermark.
    await tara.until(() => tara.received > frozen.received + 2_000_000, "the reading tab to pull ahead");
    expect(frozen.received).toBeLessThan(256 * 1024);

    tara.type("\x03");
    // The terminal throws away what was typed with the Ctrl-C: type on once the prompt is back.
    await tara.until(() => tara.screen().trimEnd().endsWith("$"), "the prompt after Ctrl-C");
    run(tara, "echo still''-here");
    await tara.untilScreenShows("still-here");

    const replays = frozen.messages.filter((message) => message.type === "replay-begin").length;
    frozen.startAcking();
    await frozen.until(
      () => frozen.messages.filter((message) => message.type === "replay-begin").length > replays,
      "a replay for the tab that caught up",
    );
    await frozen.untilScreenShows("still-here");
    expect(frozen.lastMessage("replay-begin")).toEqual({ type: "replay-begin", fresh: false });
  });

  it("closes a frame larger than the cap", async () => {
    const alice = await open(sessionId, "tara", { target: tight });
    alice.type(Buffer.alloc(tight.app.consoleHub.limits.maxFrameBytes + 1, 0x61));
    expect((await alice.untilClosed()).code).toBe(1009);
  });

  it("drops a browser that stops answering pings", async () => {
    const silent = await ConsoleTestClient.connect(tight.url, sessionId, {
      cookie: cookieOf("tara", tight),
      answerPings: false,
    });
    clients.push(silent);
    expect((await silent.untilClosed(5_000)).code).toBe(1006);
  });

  it("closes the VM connection a while after the last viewer left", async () => {
    const alice = await open(sessionId, "tara", { target: tight });
    await alice.until(() => alice.lastMessage("status")?.state === "connected", "connected");
    for (const client of clients) client.close();
    await eventually(
      async () => tight.app.consoleHub.stats(),
      (stats) => stats.consoles === 0 && stats.connectedUpstreams === 0,
      { what: "the idle console to close" },
    );
  });
});
