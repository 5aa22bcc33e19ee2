// A lab's terminals over real sockets: browsers (ws clients with the SPA's protocol) -> BFF -> the
// emulator's port-forward subresource -> the grading agent in a sandboxed guest
// (src/agent/lab_agent/), whose /v1/terminal runs the student's shell on a PTY of its own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, refusedStatus, signInCookie } from "../console/testing/console-client.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { launchRunning, startTestBff, type TestBff } from "../testing/test-bff.ts";

const lab = aLab({
  id: "terminal-lab",
  title: "Terminal lab",
  session: { minutes: 60, extendMinutes: 15, maxExtensions: 2, terminals: 2, consoles: ["serial"] },
});
const serialOnlyLab = aLab({ id: "serial-only", title: "Serial only" });

let emulator: TestEmulator;
let bff: TestBff;
let sessionId: string;
const clients: ConsoleTestClient[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({ labs: [lab, serialOnlyLab], emulator });
  sessionId = await launchRunning(await bff.signIn("alice"), lab.id);
}, 60_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await bff?.close();
  await emulator?.close();
});

async function open(who: string, terminal: number | undefined, mode?: "observe"): Promise<ConsoleTestClient> {
  const client = await ConsoleTestClient.connect(bff.url, sessionId, {
    cookie: await signInCookie(bff.url, who),
    terminal,
    mode,
  });
  clients.push(client);
  await client.untilLive(40_000);
  return client;
}

/** Runs a command and waits for its marker, which only the command's own output spells whole. */
async function run(client: ConsoleTestClient, command: string, marker: string): Promise<void> {
  const [head, tail] = [marker.slice(0, 3), marker.slice(3)];
  client.type(`${command}; echo ${head}''${tail}\r`);
  await client.untilScreenShows(marker, 30_000);
}

describe("a lab's terminals", () => {
  it("is a shell on a PTY of its own, sized by a fit, with nothing typed for it", async () => {
    const alice = await open("alice", 1);
    await run(alice, "tty", "on-a-pty");
    expect(alice.screen()).toMatch(/\/dev\/pts\/\d+/);

    alice.send({ type: "fit-guest", cols: 100, rows: 30 });
    await alice.until(() => alice.lastMessage("guest-size")?.cols === 100, "the terminal resized");
    await run(alice, "stty size", "sized-up");
    expect(alice.screen()).toContain("30 100");
    // The fit reached the PTY as a window size: no stty line was typed for it.
    expect(alice.rowsContaining("stty rows")).toBe(0);
    alice.close();
  });

  it("survives a reload: the same shell, its screen replayed", async () => {
    const first = await open("alice", 2);
    await run(first, "echo shell-$$", "first-pid");
    const pid = /shell-(\d+)/.exec(first.screen())?.[1];
    expect(pid).toBeDefined();
    first.close();

    const again = await open("alice", 2);
    expect(again.screen()).toContain(`shell-${pid}`);
    await run(again, "echo still-$$", "second-pid");
    expect(again.screen()).toContain(`still-${pid}`);
    expect(again.lastMessage("replay-begin")?.fresh).toBe(false);
    again.close();
  });

  it("is apart from the serial console and from the other terminal", async () => {
    const one = await open("alice", 1);
    const two = await open("alice", 2);
    await run(one, "echo only-in-one", "one-done");
    await run(two, "echo only-in-two", "two-done");
    expect(two.screen()).not.toContain("only-in-one");
    expect(one.screen()).not.toContain("only-in-two");
    const serial = await open("alice", undefined);
    expect(serial.screen()).not.toContain("only-in-one");
    one.close();
    two.close();
    serial.close();
  });

  it("lets staff watch, and type only once they take the keyboard, which the owner sees", async () => {
    const alice = await open("alice", 1);
    const tara = await open("tara", 1, "observe");
    await alice.until(
      () => alice.lastMessage("viewers")?.viewers.some((viewer) => viewer.username === "tara") === true,
      "alice sees tara watching",
    );
    tara.type("echo typed-by-tara-before\r");
    await run(alice, "echo owner-here", "owner-typed");
    expect(alice.screen()).not.toContain("typed-by-tara-before");

    tara.send({ type: "take-keyboard" });
    await alice.until(() => alice.lastMessage("viewers")?.holder === "tara", "tara holding the keyboard");
    await run(tara, "echo staff-typed", "tara-typed");
    await alice.untilScreenShows("staff-typed");
    tara.send({ type: "release-keyboard" });
    await alice.until(() => alice.lastMessage("viewers")?.holder === "alice", "alice has it back");
    alice.close();
    tara.close();
  });

  it("records each terminal as its own recording", async () => {
    const alice = await bff.signIn("alice");
    const recording = await eventually(
      () => alice.get(`/api/sessions/${sessionId}/recording?terminal=2`),
      (answer) => answer.status === 200 && String(answer.body).includes("second-pid"),
      { what: "terminal 2's recording", timeoutMs: 15_000 },
    );
    const cast = String(recording.body);
    expect(JSON.parse(cast.slice(0, cast.indexOf("\n"))).lab_console).toMatchObject({
      sessionId,
      terminal: 2,
    });
    expect(cast).not.toContain("only-in-one");
    expect(recording.headers.get("content-disposition")).toBe(
      `attachment; filename="${sessionId}--terminal-2.cast"`,
    );
    const listed = (await alice.get("/api/recordings")).body.items as {
      sessionId: string;
      terminal?: number;
    }[];
    const terminals = listed.filter((item) => item.sessionId === sessionId && item.terminal !== undefined);
    expect(terminals.map((item) => item.terminal).sort()).toEqual([1, 2]);
  });

  it("ends when its shell exits, and opening it again starts a new one", async () => {
    const alice = await open("alice", 1);
    alice.type("exit 7\r");
    await alice.untilClosed(20_000);
    expect(alice.lastMessage("ended")?.notice).toEqual({ reason: "shell_exited", params: { how: "7" } });
    const fresh = await open("alice", 1);
    expect(fresh.lastMessage("replay-begin")?.fresh).toBe(true);
    await run(fresh, "echo new-shell", "new-done");
    fresh.close();
  });

  it("exists only as far as the lab offers it, and only to the owner and staff", async () => {
    const alice = await signInCookie(bff.url, "alice");
    expect(await refusedStatus(bff.url, sessionId, { cookie: alice, terminal: 3 })).toBe(404);
    expect(await refusedStatus(bff.url, sessionId, { cookie: alice, terminal: 0 })).toBe(400);
    const bob = await signInCookie(bff.url, "bob");
    expect(await refusedStatus(bff.url, sessionId, { cookie: bob, terminal: 1 })).toBe(404);
    const tara = await signInCookie(bff.url, "tara");
    expect(await refusedStatus(bff.url, sessionId, { cookie: tara, terminal: 1 })).toBe(403);

    const serialOnly = await launchRunning(await bff.signIn("carol"), serialOnlyLab.id);
    const carol = await signInCookie(bff.url, "carol");
    expect(await refusedStatus(bff.url, serialOnly, { cookie: carol, terminal: 1 })).toBe(404);
  });
});
