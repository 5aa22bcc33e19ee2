// The behaviour every RecordingStorage must show, run by the recording store as the console hub
// uses it: describeRecordingStorageContract("PostgreSQL", createHarness) is all a new storage needs.
import { text } from "node:stream/consumers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RepositoryHarness } from "../../db/testing/repository-harness.ts";
import { eventually } from "../../testing/test-bff.ts";
import { headerLine, parseHeader, sizeCapMarker, type RecordingHeader } from "../asciicast.ts";
import type { RecordingStorage } from "../recording-storage.ts";
import { RecordingStore } from "../recording-store.ts";

const day = 86_400_000;
const screen = { cols: 80, rows: 24 };

export function aHeader(sessionId: string, owner = "alice", labId = "lab-one"): RecordingHeader {
  return {
    version: 2,
    width: 80,
    height: 24,
    timestamp: 1_800_000_000,
    title: `Lab Console session ${sessionId}`,
    lab_console: { sessionId, owner, labId },
  };
}

/** The events of a .cast, after its header line. */
function eventsOf(cast: string): [number, string, string][] {
  return cast
    .trimEnd()
    .split("\n")
    .slice(1)
    .map((line) => JSON.parse(line) as [number, string, string]);
}

/** The output events of a .cast, joined as a player would show them. */
function outputOf(cast: string): string {
  return eventsOf(cast)
    .filter(([, kind]) => kind === "o")
    .map(([, , output]) => output)
    .join("");
}

/** What a player relies on: one header, times that never go back, nothing after the cap marker. */
function expectWellFormed(cast: string, maxBytes: number): void {
  expect(Buffer.byteLength(cast)).toBeLessThanOrEqual(maxBytes);
  expect(cast.split("\n").filter((line) => line.startsWith("{"))).toHaveLength(1);
  const times = eventsOf(cast).map(([time]) => time);
  expect(times).toEqual([...times].sort((a, b) => a - b));
  const markers = eventsOf(cast).filter(([, kind]) => kind === "m");
  expect(markers).toEqual([[expect.any(Number), "m", sizeCapMarker]]);
  expect(eventsOf(cast).at(-1)).toEqual(markers[0]);
}

async function readAll(storage: RecordingStorage, sessionId: string): Promise<string> {
  const found = await storage.find(sessionId);
  if (!found) return "";
  const body = await storage.read(sessionId, found.bytes);
  return body ? text(body) : "";
}

/** A Date after every write made so far, and before any made from now on. */
// File modification times come from the kernel's coarse clock, which may trail Date.now() by a tick
// (up to 10 ms): a write must come well after the cutoff to be stamped after it.
const coarseClockLagMs = 20;

async function aMomentBetweenWrites(): Promise<Date> {
  const cutoff = Date.now() + 1;
  await eventually(
    async () => Date.now(),
    (later) => later > cutoff + coarseClockLagMs,
  );
  return new Date(cutoff);
}

export function describeRecordingStorageContract(
  name: string,
  create: () => Promise<RepositoryHarness<RecordingStorage>>,
): void {
  describe(`RecordingStorage contract: ${name}`, () => {
    let harness: RepositoryHarness<RecordingStorage>;
    let storage: RecordingStorage;
    let warnings: unknown[];

    const storeOn = (on: RecordingStorage, maxBytes = 1_000_000) =>
      new RecordingStore({
        storage: on,
        maxBytes,
        retentionMs: 7 * day,
        labOf: async () => "lab-one",
        log: { warn: (details: unknown) => void warnings.push(details) },
      });

    beforeEach(async () => {
      harness = await create();
      storage = harness.repository;
      warnings = [];
    });
    afterEach(async () => {
      await harness.cleanup();
      expect(warnings).toEqual([]);
    });

    it("keeps the batches appended, header first, and reads them back byte for byte", async () => {
      expect(await storage.find("s-none")).toBeUndefined();
      const header = aHeader("s-bytes");
      const batches = ['[0.1,"o","ünïcødé €"]\n', '[0.2,"o","\\u0000\\r\\n"]\n[0.3,"o","x"]\n'];
      const writtenFrom = Date.now() - 1_000;
      for (const batch of batches) await storage.append("s-bytes", { header, text: batch, capped: false });
      const cast = headerLine(header) + batches.join("");

      const found = await storage.find("s-bytes");
      expect(found).toMatchObject({ header, bytes: Buffer.byteLength(cast), capped: false });
      expect(found!.lastWrittenAt.getTime()).toBeGreaterThan(writtenFrom);
      expect(found!.lastWrittenAt.getTime()).toBeLessThan(Date.now() + 1_000);
      expect(await readAll(storage, "s-bytes")).toBe(cast);
    });

    it("reads only the bytes asked for, though more were appended since", async () => {
      const header = aHeader("s-growing");
      await storage.append("s-growing", { header, text: '[0.1,"o","before"]\n', capped: false });
      const before = await storage.find("s-growing");
      await storage.append("s-growing", { header, text: '[0.2,"o","after"]\n', capped: false });
      const body = await text((await storage.read("s-growing", before!.bytes))!);
      expect(body).toBe(headerLine(header) + '[0.1,"o","before"]\n');
    });

    it("keeps a console's last output when the storage closes right after the console", async () => {
      const recorder = storeOn(storage).recorderFor({ id: "s-last", owner: "alice" }, screen);
      recorder.output(Buffer.from("the first line\r\n"));
      recorder.output(Buffer.from("the last line\r\n"));
      await recorder.close();
      // As the server stops: the stores close once the consoles did.
      const reopened = await harness.reopen();
      expect(outputOf(await readAll(reopened, "s-last"))).toBe("the first line\r\nthe last line\r\n");
    });

    it("continues a console's recording and its size cap after it moves to another writer", async () => {
      const first = storeOn(storage, 2_000).recorderFor({ id: "s-moved", owner: "alice" }, screen);
      for (let line = 0; line < 5; line += 1) first.output(Buffer.from(`first ${line}\r\n`));
      // The holder lets the console go (its lease) once its recorder closed.
      await first.close();

      // Another replica (or this one restarted) takes the console over.
      const reopened = await harness.reopen();
      const second = storeOn(reopened, 2_000).recorderFor({ id: "s-moved", owner: "bob" }, screen);
      for (let line = 0; line < 100; line += 1) second.output(Buffer.from(`second ${line}\r\n`));
      await second.close();
      const cast = await readAll(reopened, "s-moved");
      expectWellFormed(cast, 2_000);
      expect(parseHeader(cast.slice(0, cast.indexOf("\n")))?.lab_console.owner).toBe("alice");
      expect(outputOf(cast)).toMatch(/^first 0\r\n(.|\r\n)*first 4\r\nsecond 0\r\n/);
      expect(await reopened.find("s-moved")).toMatchObject({ capped: true, bytes: Buffer.byteLength(cast) });

      // A capped recording stays as it is, whoever writes next.
      const third = storeOn(await harness.reopen(), 2_000).recorderFor(
        { id: "s-moved", owner: "alice" },
        screen,
      );
      third.output(Buffer.from("after the cap\r\n"));
      await third.close();
      expect(await readAll(reopened, "s-moved")).toBe(cast);
    });

    it("continues a console reopened while its last output is still being stored, after it", async () => {
      const store = storeOn(storage, 3_000);
      const session = { id: "s-reopened", owner: "alice" };
      const before = store.recorderFor(session, screen);
      for (let line = 0; line < 20; line += 1) before.output(Buffer.from(`before ${line}\r\n`));
      const closing = before.close();
      const after = store.recorderFor(session, screen);
      for (let line = 0; line < 200; line += 1) after.output(Buffer.from(`after ${line}\r\n`));
      await Promise.all([closing, after.close()]);

      const cast = await readAll(storage, "s-reopened");
      expectWellFormed(cast, 3_000);
      expect(outputOf(cast)).toMatch(/^before 0\r\n(.|\r\n)*before 19\r\nafter 0\r\n/);
    });

    it("answers a read of a recording removed since it was found with nothing", async () => {
      const header = aHeader("s-swept");
      await storage.append("s-swept", { header, text: '[0.1,"o","hi"]\n', capped: false });
      const found = await storage.find("s-swept");
      expect(found).toBeDefined();
      // The retention sweep runs between the two.
      expect(await storage.removeWrittenBefore(new Date(Date.now() + 60_000))).toBe(1);
      expect(await storage.read("s-swept", found!.bytes)).toBeUndefined();
      expect(await storage.find("s-swept")).toBeUndefined();
    });

    it("lists the recordings of one lab, one owner, or both, newest first", async () => {
      const recordings = [
        { ...aHeader("s-alice-one", "alice", "lab-one"), timestamp: 1_800_000_000 },
        { ...aHeader("s-alice-two", "alice", "lab-two"), timestamp: 1_800_000_200 },
        { ...aHeader("s-bob-one", "bob", "lab-one"), timestamp: 1_800_000_100 },
      ];
      for (const header of recordings) {
        await storage.append(header.lab_console.sessionId, {
          header,
          text: '[0.1,"o","hi"]\n',
          capped: false,
        });
      }
      const ids = async (filter: { labId?: string; owner?: string }) =>
        (await storage.list(filter)).map((found) => found.header.lab_console.sessionId).sort();
      expect(await ids({})).toEqual(["s-alice-one", "s-alice-two", "s-bob-one"]);
      expect(await ids({ labId: "lab-one" })).toEqual(["s-alice-one", "s-bob-one"]);
      expect(await ids({ owner: "alice" })).toEqual(["s-alice-one", "s-alice-two"]);
      expect(await ids({ owner: "alice", labId: "lab-two" })).toEqual(["s-alice-two"]);
      expect(await ids({ owner: "carol" })).toEqual([]);
      const [listed] = await storage.list({ owner: "bob" });
      expect(listed).toEqual(await storage.find("s-bob-one"));
      const listedIds = async (filter: { labId?: string; owner?: string }) =>
        (await storage.list(filter)).map((found) => found.header.lab_console.sessionId);
      expect(await listedIds({})).toEqual(["s-alice-two", "s-bob-one", "s-alice-one"]);
      expect(await listedIds({ labId: "lab-one" })).toEqual(["s-bob-one", "s-alice-one"]);
    });

    it("removes only the recordings last written before the cutoff", async () => {
      const old = aHeader("s-old");
      const kept = aHeader("s-kept");
      await storage.append("s-old", { header: old, text: '[0.1,"o","old"]\n', capped: false });
      await storage.append("s-kept", { header: kept, text: '[0.1,"o","early"]\n', capped: false });
      const cutoff = await aMomentBetweenWrites();
      await storage.append("s-kept", { header: kept, text: '[0.2,"o","late"]\n', capped: false });

      expect(await storage.removeWrittenBefore(cutoff)).toBe(1);
      expect(await storage.find("s-old")).toBeUndefined();
      expect((await storage.list({})).map((found) => found.header.lab_console.sessionId)).toEqual(["s-kept"]);
      expect(await readAll(storage, "s-kept")).toContain("late");
      expect(await storage.removeWrittenBefore(cutoff)).toBe(0);

      // A session id whose recording was removed starts afresh, header first.
      await storage.append("s-old", { header: old, text: '[0.5,"o","new"]\n', capped: false });
      expect(await readAll(storage, "s-old")).toBe(headerLine(old) + '[0.5,"o","new"]\n');
    });
  });
}
