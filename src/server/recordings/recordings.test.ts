// Console recordings over real sockets: a browser's console (ws, the SPA's protocol) -> BFF -> the
// emulator's KubeVirt console -> a bash in a sandboxed guest, and the recording as the API serves it.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../../emulator/testing/start.ts";
import { signInCookie } from "../console/testing/console-client.ts";
import { openRawConsole } from "../console/testing/raw-console.ts";
import { aLab } from "../sessions/testing/fixtures.ts";
import { eventually } from "../../common/testing/patience.ts";
import { launchRunning, startTestBff, type TestBff, type TestBrowser } from "../testing/test-bff.ts";
import { eventLine, headerLine, parseHeader } from "./asciicast.ts";
import { expectWellFormed, gapOf, outputOf } from "./testing/cast.ts";

let emulator: TestEmulator;
let bff: TestBff;

beforeAll(async () => {
  emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
  bff = await startTestBff({
    labs: [aLab({ id: "lab-rec", title: "Recorded lab" })],
    emulator,
    consoleLimits: { reconnectInitialMs: 50, notRunningRetryMs: 100 },
  });
});

afterAll(async () => {
  await bff?.close();
  await emulator?.close();
});

describe("console recordings", () => {
  let alice: TestBrowser;
  let sessionId: string;
  let shown: Buffer;
  let replayed: string;

  beforeAll(async () => {
    alice = await bff.signIn("alice");
    sessionId = await launchRunning(alice, "lab-rec");
    const console = await openRawConsole(bff.url, sessionId, await signInCookie(bff.url, "alice"));
    // Multi-byte characters, so a chunk boundary inside one would show as a difference.
    console.type("echo rec''orded-ünïcødé-€-$((6*7))\r");
    await eventually(
      async () => console.live().toString("utf8"),
      (text) => text.includes("recorded-ünïcødé-€-42"),
      { what: "the command's output" },
    );
    shown = console.live();
    replayed = console.replay().toString("utf8");
    console.close();
  });

  it("replays byte for byte what the console showed, with a header naming the session", async () => {
    const download = await eventually(
      () => alice.get(`/api/sessions/${sessionId}/recording`),
      (answer) => answer.status === 200 && Buffer.from(outputOf(String(answer.body))).length >= shown.length,
      { what: "the recording to hold everything shown" },
    );
    const cast = String(download.body);
    const recorded = Buffer.from(outputOf(cast));
    // Everything shown live, byte for byte. A fresh console's first screen comes from the serial
    // console log; what the guest printed while it was read is recorded as it came and was shown in
    // that first screen, so every line of it is in the replay.
    expect(recorded.subarray(recorded.length - shown.length)).toEqual(shown);
    const beforeLive = recorded.subarray(0, recorded.length - shown.length).toString("utf8");
    const visible = (text: string) =>
      text
        .split("\u001b")
        .map((part, index) => (index === 0 ? part : part.replace(/^\[[0-9;?]*[A-Za-z]/, "")))
        .join("")
        .replace(/\r/g, "");
    const lines = visible(beforeLive)
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "");
    expect(lines.filter((line) => !visible(replayed).includes(line))).toEqual([]);
    expect(download.headers.get("content-type")).toBe("application/x-asciicast");
    expect(download.headers.get("content-disposition")).toBe(`attachment; filename="${sessionId}.cast"`);
    const header = parseHeader(cast.slice(0, cast.indexOf("\n")));
    expect(header).toMatchObject({
      version: 2,
      width: 80,
      height: 24,
      lab_console: { sessionId, owner: "alice", labId: "lab-rec" },
    });
    const times = cast
      .trimEnd()
      .split("\n")
      .slice(1)
      .map((line) => (JSON.parse(line) as [number])[0]);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("lets staff list and download it, the owner download it, and nobody else", async () => {
    const tara = await bff.signIn("tara");
    const bob = await bff.signIn("bob");
    expect((await tara.get(`/api/sessions/${sessionId}/recording`)).status).toBe(200);
    expect((await bob.get(`/api/sessions/${sessionId}/recording`)).status).toBe(404);
    const listed = await tara.get("/api/recordings?lab=lab-rec");
    expect(listed.body.items).toEqual([
      expect.objectContaining({ sessionId, owner: "alice", labId: "lab-rec" }),
    ]);
    expect((await tara.get("/api/recordings?lab=lab-other")).body.items).toEqual([]);
    expect((await bob.get("/api/recordings")).body.items).toEqual([]);
    expect((await alice.get("/api/recordings")).body.items).toHaveLength(1);
  });

  it("keeps the recording after the session is deleted", async () => {
    const before = await alice.get(`/api/sessions/${sessionId}/recording`);
    expect((await alice.delete(`/api/sessions/${sessionId}`)).status).toBeLessThan(300);
    await eventually(
      () => alice.get(`/api/sessions/${sessionId}`),
      (answer) => answer.status === 404,
      { what: "the session gone", timeoutMs: 20_000 },
    );
    const after = await (await bff.signIn("ivan")).get(`/api/sessions/${sessionId}/recording`);
    expect(after.status).toBe(200);
    expect(String(after.body).startsWith(String(before.body).slice(0, 200))).toBe(true);
  });
});

describe("the recordings list's student filter", () => {
  beforeAll(async () => {
    // Bob's recording of a session long gone: only its file is left.
    const header = headerLine({
      version: 2,
      width: 80,
      height: 24,
      timestamp: Math.floor(Date.now() / 1000) - 3600,
      lab_console: { sessionId: "s-bob-gone", owner: "bob", labId: "lab-rec" },
    });
    await mkdir(bff.recordingsDir, { recursive: true });
    await writeFile(
      path.join(bff.recordingsDir, "s-bob-gone.cast"),
      header + eventLine(0.5, "o", "bob was here"),
    );
  });

  it("gives staff one student's recordings, with or without a lab", async () => {
    const tara = await bff.signIn("tara");
    const owners = async (query: string) =>
      ((await tara.get(`/api/recordings${query}`)).body.items as { owner: string }[]).map(
        (item) => item.owner,
      );
    expect(await owners("?student=bob")).toEqual(["bob"]);
    expect(await owners("?student=bob&lab=lab-rec")).toEqual(["bob"]);
    expect(await owners("?student=bob&lab=lab-other")).toEqual([]);
    expect(await owners("?student=nobody")).toEqual([]);
    expect((await owners("")).sort()).toEqual(["alice", "bob"]);
  });

  it("gives a student only their own, whoever they ask for", async () => {
    const alice = await bff.signIn("alice");
    for (const query of ["?student=bob", "?student=alice", ""]) {
      const items = (await alice.get(`/api/recordings${query}`)).body.items as { owner: string }[];
      expect(items.map((item) => item.owner)).toEqual(["alice"]);
    }
  });

  it("refuses a student filter that cannot be a username", async () => {
    const tara = await bff.signIn("tara");
    expect((await tara.get("/api/recordings?student=")).status).toBe(400);
    expect((await tara.get(`/api/recordings?student=${"x".repeat(65)}`)).status).toBe(400);
  });
});

describe("the server stopping", () => {
  it("stores what a console printed just before, ahead of closing its stores", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "recordings-stopping-"));
    const stopping = await startTestBff({
      labs: [aLab({ id: "lab-rec" })],
      emulator,
      gradingDataDir: dataDir,
    });
    try {
      const bob = await stopping.signIn("bob");
      const sessionId = await launchRunning(bob, "lab-rec");
      const console = await openRawConsole(stopping.url, sessionId, await signInCookie(stopping.url, "bob"));
      console.type("echo the-last-$((6*7))\r");
      await eventually(
        async () => console.live().toString("utf8"),
        (text) => text.includes("the-last-42"),
        { what: "the command's output" },
      );
      await stopping.close();
      const cast = await readFile(path.join(stopping.recordingsDir, `${sessionId}.cast`), "utf8");
      expect(outputOf(cast)).toContain("the-last-42");
    } finally {
      await stopping.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("a student who floods their console", () => {
  it("cannot hide from staff what they do after the flood", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "recordings-flooded-"));
    const maxBytes = 64 * 1024;
    const capped = await startTestBff({
      labs: [aLab({ id: "lab-rec" })],
      emulator,
      gradingDataDir: dataDir,
      recordingLimits: { maxBytes },
    });
    try {
      const carol = await capped.signIn("carol");
      const sessionId = await launchRunning(carol, "lab-rec");
      const console = await openRawConsole(capped.url, sessionId, await signInCookie(capped.url, "carol"));
      const shows = (what: string, timeoutMs = 20_000) =>
        eventually(
          async () => console.live().toString("utf8"),
          (text) => text.includes(what),
          { what, timeoutMs },
        );
      console.type("echo before-the-fl''ood\r");
      await shows("before-the-flood");
      // Six times the cap, as `yes` would print it in a moment.
      console.type("yes flooding-the-recording | head -c 400000; echo flood-d''one\r");
      await shows("flood-done", 90_000);
      console.type("echo after-the-fl''ood-$((6*7))\r");
      await shows("after-the-flood-42");

      const tara = await capped.signIn("tara");
      const download = await eventually(
        () => tara.get(`/api/sessions/${sessionId}/recording`),
        (answer) => answer.status === 200 && outputOf(String(answer.body)).includes("after-the-flood-42"),
        { what: "the command after the flood in the recording" },
      );
      const cast = String(download.body);
      expect(Number(download.headers.get("content-length"))).toBe(Buffer.byteLength(cast));
      expectWellFormed(cast, maxBytes);
      const gap = gapOf(cast);
      expect(gap?.before).toContain("before-the-flood");
      expect(gap?.dropped).toBeGreaterThan(300_000);
      // The tail: the flood's last lines, then what came after them.
      expect(gap?.after.indexOf("flooding-the-recording\r\n")).toBeGreaterThanOrEqual(0);
      expect(gap?.after.lastIndexOf("flooding-the-recording\r\n")).toBeLessThan(
        gap!.after.indexOf("after-the-flood-42"),
      );
      console.close();
    } finally {
      await capped.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
