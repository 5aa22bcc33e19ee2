// The behaviour every RecordingStorage must show, run by the recording store as the console hub
// uses it: describeRecordingStorageContract("PostgreSQL", createHarness) is all a new storage needs.
import { text } from "node:stream/consumers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RepositoryHarness } from "../../db/testing/repository-harness.ts";
import { eventually } from "../../../common/testing/patience.ts";
import { eventLine, headerLine, parseHeader, type RecordingHeader } from "../asciicast.ts";
import type { RecordingStorage } from "../recording-storage.ts";
import { RecordingStore, type ConsoleRecorder } from "../recording-store.ts";
import { expectGapAccountsFor, expectWellFormed, floodText, gapOf, outputOf } from "./cast.ts";

const day = 86_400_000;
const screen = { cols: 80, rows: 24 };
/** Small enough that a test floods past it in a moment; the head is what the tail leaves. */
const smallCap = { maxBytes: 64 * 1024, tailBytes: 8 * 1024 };
/** Within a line or two of full: a flood's event lines are about 1 KiB each. */
const aLineOrTwo = 2_048;

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

/** Prints into a console's recorder in chunks as a VM's serial line delivers them, keeping what it printed. */
function printer() {
  let printed = "";
  return {
    print(recorder: ConsoleRecorder, text: string, chunkBytes = 1_000): void {
      for (let at = 0; at < text.length; at += chunkBytes) {
        recorder.output(Buffer.from(text.slice(at, at + chunkBytes)));
      }
      printed += text;
    },
    get printed(): string {
      return printed;
    },
  };
}

/** The whole recording as the download route sends it: found, then read at the length found. */
async function readAll(storage: RecordingStorage, sessionId: string): Promise<string> {
  // A tail replaced between the two is not the recording found: find it again.
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const found = await storage.find(sessionId);
    if (!found) return "";
    const body = await storage.read(sessionId, found.bytes);
    if (!body) continue;
    const cast = await text(body);
    expect(Buffer.byteLength(cast)).toBe(found.bytes);
    return cast;
  }
  throw new Error(`the recording ${sessionId} kept changing between find and read`);
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

    const storeOn = (
      on: RecordingStorage,
      limits: { maxBytes?: number; tailBytes?: number; tailWriteIntervalMs?: number } = {},
    ) =>
      new RecordingStore({
        storage: on,
        maxBytes: 1_000_000,
        ...limits,
        retentionMs: 7 * day,
        sessionOf: async () => ({ labId: "lab-one", section: null }),
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
      for (const batch of batches) await storage.append("s-bytes", { header, text: batch });
      const cast = headerLine(header) + batches.join("");

      const found = await storage.find("s-bytes");
      expect(found).toMatchObject({ header, bytes: Buffer.byteLength(cast), tailBytes: 0 });
      expect(found!.lastWrittenAt.getTime()).toBeGreaterThan(writtenFrom);
      expect(found!.lastWrittenAt.getTime()).toBeLessThan(Date.now() + 1_000);
      expect(await readAll(storage, "s-bytes")).toBe(cast);
    });

    it("reads only the bytes asked for, though more were appended since", async () => {
      const header = aHeader("s-growing");
      await storage.append("s-growing", { header, text: '[0.1,"o","before"]\n' });
      const before = await storage.find("s-growing");
      await storage.append("s-growing", { header, text: '[0.2,"o","after"]\n' });
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

    it("keeps the beginning and the last output of a flood, and counts what it left out between", async () => {
      const recorder = storeOn(storage, smallCap).recorderFor({ id: "s-flood", owner: "alice" }, screen);
      const out = printer();
      out.print(recorder, "the-beginning\r\n");
      out.print(recorder, floodText(300 * 1024));
      out.print(recorder, "after-the-flood\r\n");
      await recorder.close();

      const cast = await readAll(storage, "s-flood");
      expectWellFormed(cast, smallCap.maxBytes);
      expect(outputOf(cast)).toMatch(/^the-beginning\r\nflood 0 y+\r\nflood 1 /);
      expect(outputOf(cast).endsWith("after-the-flood\r\n")).toBe(true);
      const gap = expectGapAccountsFor(cast, out.printed);
      // Both ends are as full as the cap allows: the flood's own last lines are kept, not only the
      // line after it, and the head takes what the tail leaves.
      expect(gap.after).toMatch(/flood \d+ y+\r\nafter-the-flood\r\n$/);
      expect(Buffer.byteLength(gap.tail)).toBeLessThanOrEqual(smallCap.tailBytes);
      expect(Buffer.byteLength(gap.tail)).toBeGreaterThan(smallCap.tailBytes - aLineOrTwo);
      expect(Buffer.byteLength(cast) - Buffer.byteLength(gap.tail)).toBeGreaterThan(
        smallCap.maxBytes - smallCap.tailBytes - aLineOrTwo,
      );
      expect(await storage.find("s-flood")).toMatchObject({
        bytes: Buffer.byteLength(cast),
        tailBytes: Buffer.byteLength(gap.tail),
      });
    });

    it("stays within its cap and whole whenever it is read while a flood goes on", async () => {
      const store = storeOn(storage, { ...smallCap, tailWriteIntervalMs: 5 });
      const recorder = store.recorderFor({ id: "s-bounded", owner: "alice" }, screen);
      const out = printer();
      for (let round = 0; round < 20; round += 1) {
        out.print(recorder, floodText(16 * 1024, `round ${round}`));
        await new Promise((resolve) => setTimeout(resolve, 10));
        const cast = await readAll(storage, "s-bounded");
        if (cast) expectWellFormed(cast, smallCap.maxBytes);
      }
      out.print(recorder, "the end\r\n");
      await recorder.close();
      const cast = await readAll(storage, "s-bounded");
      expectWellFormed(cast, smallCap.maxBytes);
      expectGapAccountsFor(cast, out.printed);
      expect(outputOf(cast)).toMatch(/round 19 \d+ y+\r\nthe end\r\n$/);
    });

    it("continues a console's recording, its tail and its gap after it moves to another writer", async () => {
      const out = printer();
      const first = storeOn(storage, smallCap).recorderFor({ id: "s-moved", owner: "alice" }, screen);
      out.print(first, "first-console\r\n");
      out.print(first, floodText(100 * 1024, "first"));
      // The holder lets the console go (its lease) once its recorder closed.
      await first.close();

      // Another replica (or this one restarted) takes the console over and prints a little: the
      // first holder's last output is still the recording's last but one.
      let reopened = await harness.reopen();
      const second = storeOn(reopened, smallCap).recorderFor({ id: "s-moved", owner: "bob" }, screen);
      out.print(second, "second-console\r\n");
      await second.close();
      let cast = await readAll(reopened, "s-moved");
      expectWellFormed(cast, smallCap.maxBytes);
      expect(parseHeader(cast.slice(0, cast.indexOf("\n")))?.lab_console.owner).toBe("alice");
      expect(outputOf(cast).startsWith("first-console\r\nfirst 0 ")).toBe(true);
      expect(expectGapAccountsFor(cast, out.printed).after).toMatch(/first \d+ y+\r\nsecond-console\r\n$/);

      // A third floods again: the gap grows by what it could not keep, counted on from the second's.
      reopened = await harness.reopen();
      const third = storeOn(reopened, smallCap).recorderFor({ id: "s-moved", owner: "alice" }, screen);
      out.print(third, floodText(50 * 1024, "third"));
      out.print(third, "the-very-end\r\n");
      await third.close();
      cast = await readAll(reopened, "s-moved");
      expectWellFormed(cast, smallCap.maxBytes);
      expect(outputOf(cast).startsWith("first-console\r\nfirst 0 ")).toBe(true);
      expect(expectGapAccountsFor(cast, out.printed).after).toMatch(/third \d+ y+\r\nthe-very-end\r\n$/);
    });

    it("continues a console reopened while its last output is still being stored, after it", async () => {
      const store = storeOn(storage, { maxBytes: 16 * 1024, tailBytes: 2 * 1024 });
      const session = { id: "s-reopened", owner: "alice" };
      const out = printer();
      const before = store.recorderFor(session, screen);
      for (let line = 0; line < 20; line += 1) out.print(before, `before ${line}\r\n`);
      const closing = before.close();
      const after = store.recorderFor(session, screen);
      for (let line = 0; line < 2_000; line += 1) out.print(after, `after ${line}\r\n`);
      await Promise.all([closing, after.close()]);

      const cast = await readAll(storage, "s-reopened");
      expectWellFormed(cast, 16 * 1024);
      expect(outputOf(cast)).toMatch(/^before 0\r\n(.|\r\n)*before 19\r\nafter 0\r\n/);
      expect(outputOf(cast).endsWith("after 1998\r\nafter 1999\r\n")).toBe(true);
      expectGapAccountsFor(cast, out.printed);
    });

    it("reads the tail find measured, or nothing once a tail of another length replaced it", async () => {
      const header = aHeader("s-tail");
      const head = '[0.1,"o","head"]\n';
      const tails = ['[0.2,"o","tail one"]\n', '[0.3,"o","tail two"]\n', '[0.4,"o","tail three, longer"]\n'];
      await storage.append("s-tail", { header, text: head });
      await storage.replaceTail("s-tail", { header, text: tails[0]! });
      const found = await storage.find("s-tail");
      expect(found).toMatchObject({
        header,
        bytes: Buffer.byteLength(headerLine(header) + head + tails[0]),
        tailBytes: Buffer.byteLength(tails[0]!),
      });
      expect(await storage.list({})).toEqual([found]);
      expect(await text((await storage.read("s-tail", found!.bytes))!)).toBe(
        headerLine(header) + head + tails[0],
      );

      // Replaced by one as long: still a whole recording, of the length find gave.
      await storage.replaceTail("s-tail", { header, text: tails[1]! });
      expect(await text((await storage.read("s-tail", found!.bytes))!)).toBe(
        headerLine(header) + head + tails[1],
      );
      // Replaced by a longer one: no longer what find measured.
      await storage.replaceTail("s-tail", { header, text: tails[2]! });
      expect(await storage.read("s-tail", found!.bytes)).toBeUndefined();
      expect(await readAll(storage, "s-tail")).toBe(headerLine(header) + head + tails[2]);
      expect(await storage.tail("s-tail")).toBe(tails[2]);
      expect(await storage.tail("s-bytes")).toBeUndefined();

      // A tail stored when the head's first batch was lost still comes after a header.
      const alone = aHeader("s-tail-alone");
      await storage.replaceTail("s-tail-alone", { header: alone, text: tails[0]! });
      expect(await readAll(storage, "s-tail-alone")).toBe(headerLine(alone) + tails[0]);
    });

    it("goes on after the size-cap marker of a recording that an earlier version stopped", async () => {
      // What the console wrote before the cap kept a tail: a full head ending with its marker.
      const header = { ...aHeader("s-old-cap"), timestamp: Math.floor(Date.now() / 1000) - 60 };
      let old = "";
      for (let line = 0; Buffer.byteLength(headerLine(header) + old) < smallCap.maxBytes - 200; line += 1) {
        old += eventLine(1 + line / 1_000, "o", `old ${line} ${"y".repeat(100)}\r\n`);
      }
      old += eventLine(2, "m", "recording stopped: size limit reached");
      await storage.append("s-old-cap", { header, text: old });
      expect(await readAll(storage, "s-old-cap")).toBe(headerLine(header) + old);

      const recorder = storeOn(storage, smallCap).recorderFor({ id: "s-old-cap", owner: "alice" }, screen);
      recorder.output(Buffer.from("after-the-upgrade\r\n"));
      await recorder.close();
      const cast = await readAll(storage, "s-old-cap");
      // A head filled to the old cap keeps all of it; the tail comes on top.
      expectWellFormed(cast, smallCap.maxBytes + smallCap.tailBytes);
      expect(cast.startsWith(headerLine(header) + old)).toBe(true);
      expect(outputOf(cast).endsWith("after-the-upgrade\r\n")).toBe(true);
      expect(gapOf(cast)).toBeUndefined();
    });

    it("removes a recording's tail with it, and counts storing the tail as a write", async () => {
      const header = aHeader("s-swept-tail");
      await storage.append("s-swept-tail", { header, text: '[0.1,"o","head"]\n' });
      const cutoff = await aMomentBetweenWrites();
      await storage.replaceTail("s-swept-tail", { header, text: '[0.2,"o","tail"]\n' });
      expect(await storage.removeWrittenBefore(cutoff)).toBe(0);
      expect((await storage.find("s-swept-tail"))!.lastWrittenAt.getTime()).toBeGreaterThanOrEqual(
        cutoff.getTime(),
      );

      expect(await storage.removeWrittenBefore(new Date(Date.now() + 60_000))).toBe(1);
      expect(await storage.find("s-swept-tail")).toBeUndefined();
      expect(await storage.tail("s-swept-tail")).toBeUndefined();
      // The same id starts afresh, without the old tail.
      await storage.append("s-swept-tail", { header, text: '[0.5,"o","new"]\n' });
      expect(await readAll(storage, "s-swept-tail")).toBe(headerLine(header) + '[0.5,"o","new"]\n');
    });

    it("answers a read of a recording removed since it was found with nothing", async () => {
      const header = aHeader("s-swept");
      await storage.append("s-swept", { header, text: '[0.1,"o","hi"]\n' });
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
      await storage.append("s-old", { header: old, text: '[0.1,"o","old"]\n' });
      await storage.append("s-kept", { header: kept, text: '[0.1,"o","early"]\n' });
      const cutoff = await aMomentBetweenWrites();
      await storage.append("s-kept", { header: kept, text: '[0.2,"o","late"]\n' });

      expect(await storage.removeWrittenBefore(cutoff)).toBe(1);
      expect(await storage.find("s-old")).toBeUndefined();
      expect((await storage.list({})).map((found) => found.header.lab_console.sessionId)).toEqual(["s-kept"]);
      expect(await readAll(storage, "s-kept")).toContain("late");
      expect(await storage.removeWrittenBefore(cutoff)).toBe(0);

      // A session id whose recording was removed starts afresh, header first.
      await storage.append("s-old", { header: old, text: '[0.5,"o","new"]\n' });
      expect(await readAll(storage, "s-old")).toBe(headerLine(old) + '[0.5,"o","new"]\n');
    });
  });
}
