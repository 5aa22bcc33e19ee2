// The class wall's search over real sockets: a staff wall and students' consoles -> BFF -> the
// emulator's KubeVirt consoles -> bash in thirty sandboxed guests. The BFF searches its own copies
// of the screens; the wall only says what to look for and gets back where it was found.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { WallMatch, WallSearch } from "../../common/wall-protocol.ts";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../console/testing/console-client.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { manyStudents } from "../testing/many-students.ts";
import { eventually } from "../../common/testing/patience.ts";
import { startTestBff, type TestBff } from "../testing/test-bff.ts";
import { WallTestClient } from "./testing/wall-client.ts";

const labId = "search-lab";
const classSize = 30;
const needle = "needle-42";
const plain: WallSearch = { query: needle, regex: false, matchCase: false };
let emulator: TestEmulator;
let bff: TestBff;
let students: string[];
/** Session ids, in the students' order. */
let sessions: string[];
let staffCookie: string;
const sockets: { close(): void }[] = [];

/** The walls a test opened: closed after it, since a person may have three open at once. */
const walls: WallTestClient[] = [];

async function openWall(): Promise<WallTestClient> {
  // The last test's walls may still count for a moment after they closed.
  const wall = await eventually(
    async () => {
      const opened = await WallTestClient.connect(bff.url, labId, { cookie: staffCookie });
      await opened.until(
        () => opened.frames > 0 || opened.closedWith !== undefined,
        "the wall's first frame",
      );
      return opened;
    },
    (opened) => opened.refused === undefined,
    { what: "a wall not refused" },
  );
  walls.push(wall);
  await wall.until(() => sessions.every((id) => wall.screens.has(id)), "every screen", 30_000);
  return wall;
}

/** The student's own console, typed into: `echo nee''dle-42` prints the needle once, its echo does not. */
async function typeAs(index: number, line: string, shows: string): Promise<void> {
  const console = await ConsoleTestClient.connect(bff.url, sessions[index]!, {
    cookie: await signInCookie(bff.url, students[index]!),
  });
  sockets.push(console);
  // Keystrokes before the VM's console is connected would go nowhere.
  await console.untilLive(30_000);
  console.type(`${line}\r`);
  await console.untilScreenShows(shows, 30_000);
}

/** Where `text` is on the rows, as the BFF should have found it (ignoring case). */
function occurrences(rows: string[], text: string): WallMatch["hits"] {
  return rows.flatMap((row, index) =>
    [...row.toLowerCase().matchAll(new RegExp(text, "g"))].map((found) => ({
      row: index,
      start: found.index,
      end: found.index + text.length,
    })),
  );
}

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  const signIns = await manyStudents(classSize);
  students = signIns.students;
  bff = await startTestBff({
    labs: [
      aLab({
        id: labId,
        title: "Search lab",
        vm: {
          cpu: 1,
          memory: "1Gi",
          image: "quay.io/containerdisks/fedora:41",
          nested: false,
          cloudInit: null,
        },
      }),
    ],
    emulator,
    authenticator: signIns.authenticator,
    wallTiming: { screenIntervalMs: 100, listIntervalMs: 200 },
  });
  staffCookie = await signInCookie(bff.url, "ivan");
  const browsers = await Promise.all(students.map((student) => bff.signIn(student)));
  const launched = await Promise.all(browsers.map((browser) => browser.post("/api/sessions", { labId })));
  sessions = launched.map((answer) => answer.body.id as string);
  // Thirty guests boot at once on two cores: longer than launchRunning waits for one.
  const ivan = await bff.signIn("ivan");
  await eventually(
    () => ivan.get(`/api/sessions?lab=${labId}`),
    (answer) =>
      (answer.body.items as { status: string }[]).filter((item) => item.status === "running").length ===
      classSize,
    { what: "every session running", timeoutMs: 150_000 },
  );
}, 180_000);

afterEach(async () => {
  for (const wall of walls.splice(0)) {
    wall.close();
    await wall.until(() => wall.closedWith !== undefined, "the wall closed");
  }
});

afterAll(async () => {
  for (const socket of sockets) socket.close();
  await bff?.close();
  await emulator?.close();
});

describe("the class wall's search", () => {
  const shown = [4, 17, 25];
  const later = 9;

  it("lists section, idle and last input for every session, the input once the owner typed", async () => {
    const wall = await openWall();
    expect(wall.sessions).toHaveLength(classSize);
    for (const item of wall.sessions)
      expect(item).toMatchObject({ section: null, idle: null, lastInputAt: null });
    const before = Date.now();
    await Promise.all(shown.map((index) => typeAs(index, `echo nee''dle-42`, needle)));
    await wall.until(
      () => shown.every((index) => wall.session(sessions[index]!)?.lastInputAt !== null),
      "the typists' last input",
    );
    for (const index of shown) {
      const at = Date.parse(wall.session(sessions[index]!)!.lastInputAt!);
      expect(at).toBeGreaterThanOrEqual(before - 1);
      expect(at).toBeLessThanOrEqual(Date.now());
    }
    expect(wall.session(sessions[0]!)?.lastInputAt).toBeNull();
  });

  it("finds a string on exactly the screens that show it, where they show it", async () => {
    const wall = await openWall();
    wall.search(plain);
    await wall.until(() => wall.matchesFor(plain)?.size === shown.length, "three matches");
    const matches = wall.matchesFor(plain)!;
    expect([...matches.keys()].sort()).toEqual(shown.map((index) => sessions[index]!).sort());
    for (const [sessionId, match] of matches) {
      const rows = wall.screens.get(sessionId)!.rows;
      expect(match.hits).toEqual(occurrences(rows, needle));
      expect(match.hits).toHaveLength(1);
      expect(match.scrollbackHits).toBe(0);
      const [hit] = match.hits;
      expect(rows[hit!.row]!.slice(hit!.start, hit!.end)).toBe(needle);
    }
  });

  it("searches with a regular expression, ignoring case unless asked", async () => {
    const wall = await openWall();
    const regex: WallSearch = { query: "NEEDLE-\\d+", regex: true, matchCase: false };
    wall.search(regex);
    await wall.until(() => wall.matchesFor(regex)?.size === shown.length, "three matches");
    for (const [sessionId, match] of wall.matchesFor(regex)!) {
      expect(match.hits).toEqual(occurrences(wall.screens.get(sessionId)!.rows, needle));
    }
    const cased: WallSearch = { ...regex, matchCase: true };
    wall.search(cased);
    await wall.until(() => wall.matchesFor(cased) !== undefined, "an answer");
    expect(wall.matchesFor(cased)?.size).toBe(0);
  });

  it("refuses a pattern it cannot run in linear time, and takes the next search", async () => {
    const wall = await openWall();
    const backReference: WallSearch = { query: "(needle)-\\1", regex: true, matchCase: false };
    wall.search(backReference);
    await wall.until(() => wall.answer?.type === "search-refused", "the refusal");
    expect(wall.answer).toMatchObject({ search: backReference, reason: "bad_pattern" });
    expect(wall.answer?.type === "search-refused" && wall.answer.detail).toMatch(/back-references/);
    wall.search(plain);
    await wall.until(() => wall.matchesFor(plain)?.size === shown.length, "three matches");
  });

  it("follows the screens as they change, without a new search", async () => {
    const wall = await openWall();
    wall.search(plain);
    await wall.until(() => wall.matchesFor(plain)?.size === shown.length, "three matches");

    await typeAs(later, `echo nee''dle-42`, needle);
    await wall.until(() => wall.matchesFor(plain)?.has(sessions[later]!) === true, "the fourth screen");
    const fourth = wall.matchesFor(plain)!.get(sessions[later]!)!;
    expect(fourth.hits).toEqual(occurrences(wall.screens.get(sessions[later]!)!.rows, needle));

    // Scrolled off the screen, the needle is still found above it.
    const scrolled = sessions[shown[0]!]!;
    await typeAs(shown[0]!, "seq 1 40", "\n40");
    await wall.until(() => {
      const match = wall.matchesFor(plain)?.get(scrolled);
      return match?.hits.length === 0 && match.scrollbackHits === 1;
    }, "the needle in the scrollback");
    expect(wall.matchesFor(plain)?.size).toBe(shown.length + 1);

    // Cleared off the screen (and the scrollback, by bash's `clear`), it is still found above it.
    const cleared = sessions[shown[1]!]!;
    await typeAs(shown[1]!, "clear", "$");
    await wall.until(() => {
      const match = wall.matchesFor(plain)?.get(cleared);
      return match?.hits.length === 0 && match.scrollbackHits === 1;
    }, "the cleared needle in the scrollback");
    expect(wall.matchesFor(plain)?.size).toBe(shown.length + 1);
  });

  it("ends the wall on a frame that is not a wall message", async () => {
    for (const garbage of [
      "not json",
      JSON.stringify({ type: "search", search: { query: 1 } }),
      Buffer.from([1]),
    ]) {
      const wall = await openWall();
      wall.sendRaw(garbage);
      await wall.until(() => wall.closedWith !== undefined, "the close");
      expect(wall.closedWith?.code).toBe(1008);
    }
    const wall = await openWall();
    wall.sendRaw(JSON.stringify({ type: "search", search: { ...plain, query: "x".repeat(3000) } }));
    await wall.until(() => wall.closedWith !== undefined, "the close");
    expect(wall.closedWith?.code).toBe(1009);
  });
});
