// The store on a real folder (the file storage): what the size cap costs a flood (one tail write a
// second) and keeps of it, the retention sweep removes only what is past its time, and the files are
// the BFF's alone.
import { mkdtemp, readFile, rm, stat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { text } from "node:stream/consumers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { patient, eventually } from "../../common/testing/patience.ts";
import { FileRecordingStorage } from "./file-recording-storage.ts";
import type { RecordingBatch, RecordingStorage } from "./recording-storage.ts";
import { RecordingStore } from "./recording-store.ts";
import { expectGapAccountsFor, expectWellFormed, floodText, outputOf } from "./testing/cast.ts";

let dir: string;
let warnings: unknown[];
const day = 86_400_000;

function storeWith(
  limits: { maxBytes: number; tailBytes?: number },
  storage: RecordingStorage = new FileRecordingStorage(dir),
): RecordingStore {
  return new RecordingStore({
    storage,
    ...limits,
    retentionMs: 7 * day,
    sessionOf: async () => ({ labId: "lab-one", section: null }),
    log: { warn: (details: unknown) => void warnings.push(details) },
  });
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "recordings-"));
  warnings = [];
});
afterEach(async () => {
  expect(warnings).toEqual([]);
  await rm(dir, { recursive: true, force: true });
});

/** Counts the tail's replacements: how often a flood makes the storage write. */
class CountingTailWrites extends FileRecordingStorage {
  readonly tailWrites: number[] = [];

  override replaceTail(sessionId: string, batch: RecordingBatch): Promise<void> {
    this.tailWrites.push(Date.now());
    return super.replaceTail(sessionId, batch);
  }
}

async function castOf(store: RecordingStore, sessionId: string): Promise<string> {
  const found = await store.find(sessionId);
  const body = found && (await store.read(sessionId, found.bytes));
  return body ? text(body) : "";
}

describe("the size cap", () => {
  it("stores the tail at most once a second while a flood goes on, and once more as the console closes", async () => {
    const storage = new CountingTailWrites(dir);
    const store = storeWith({ maxBytes: 64 * 1024, tailBytes: 8 * 1024 }, storage);
    const recorder = store.recorderFor({ id: "s-flooding", owner: "alice" }, { cols: 80, rows: 24 });
    const printed: string[] = [];
    // A flood of 4 KiB every 10 ms, until the tail was stored twice meanwhile.
    const deadline = Date.now() + patient(10_000);
    while (storage.tailWrites.length < 2 && Date.now() < deadline) {
      const flood = floodText(4 * 1024);
      recorder.output(Buffer.from(flood));
      printed.push(flood);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    recorder.output(Buffer.from("after-the-flood\r\n"));
    printed.push("after-the-flood\r\n");
    // Stored while output flows, not only at the end: a console that crashes keeps a recent tail.
    const whileFlooding = [...storage.tailWrites];
    expect(whileFlooding).toHaveLength(2);
    for (let index = 1; index < whileFlooding.length; index += 1) {
      expect(whileFlooding[index]! - whileFlooding[index - 1]!).toBeGreaterThanOrEqual(990);
    }

    await recorder.close();
    expect(storage.tailWrites).toHaveLength(whileFlooding.length + 1);
    const cast = await castOf(store, "s-flooding");
    expectWellFormed(cast, 64 * 1024);
    expect(outputOf(cast).endsWith("after-the-flood\r\n")).toBe(true);
    expectGapAccountsFor(cast, printed.join(""));
  });

  it("keeps the end of one chunk bigger than the whole tail", async () => {
    const store = storeWith({ maxBytes: 64 * 1024, tailBytes: 8 * 1024 });
    const recorder = store.recorderFor({ id: "s-big-chunk", owner: "alice" }, { cols: 80, rows: 24 });
    const printed = ["the-beginning\r\n", floodText(100 * 1024), `${floodText(20 * 1024, "big")}the-end\r\n`];
    for (const chunk of printed) recorder.output(Buffer.from(chunk));
    await recorder.close();
    const cast = await castOf(store, "s-big-chunk");
    expectWellFormed(cast, 64 * 1024);
    expect(outputOf(cast)).toMatch(/^the-beginning\r\nflood 0 /);
    expect(expectGapAccountsFor(cast, printed.join("")).after).toMatch(
      /^[^]{6000,}big \d+ y+\r\nthe-end\r\n$/,
    );
  });

  it("refuses a tail too small for a line or too big to leave a head", () => {
    expect(() => storeWith({ maxBytes: 64 * 1024, tailBytes: 512 })).toThrow(/tail/);
    expect(() => storeWith({ maxBytes: 64 * 1024, tailBytes: 40 * 1024 })).toThrow(/tail/);
  });

  it("keeps a character split across chunks whole", async () => {
    const store = storeWith({ maxBytes: 10_000 });
    const euro = Buffer.from("€");
    const recorder = store.recorderFor({ id: "s-split", owner: "bob" }, { cols: 80, rows: 24 });
    recorder.output(Buffer.concat([Buffer.from("a"), euro.subarray(0, 1)]));
    recorder.output(Buffer.concat([euro.subarray(1), Buffer.from("b")]));
    // The output the file holds so far (its first line is the header, which names bob).
    const recorded = async () => {
      const cast = await readFile(path.join(dir, "s-split.cast"), "utf8").catch(() => "");
      return cast
        .trimEnd()
        .split("\n")
        .slice(1)
        .map((line) => (JSON.parse(line) as [number, string, string])[2])
        .join("");
    };
    expect(await eventually(recorded, (text) => text.endsWith("b"))).toBe("a€b");
  });
});

describe("the retention sweep", () => {
  it("removes recordings last written before the retention period, and keeps the rest", async () => {
    const store = storeWith({ maxBytes: 10_000 });
    for (const id of ["s-old", "s-new"]) {
      store.recorderFor({ id, owner: "alice" }, { cols: 80, rows: 24 }).output(Buffer.from("hi"));
    }
    await eventually(
      () => store.list({}, () => true),
      (items) => items.length === 2,
    );
    const old = new Date(Date.now() - 8 * day);
    await utimes(path.join(dir, "s-old.cast"), old, old);

    expect(await store.sweep()).toBe(1);
    expect(await stat(path.join(dir, "s-old.cast")).catch(() => undefined)).toBeUndefined();
    expect((await store.list({ labId: "lab-one" }, () => true)).map((item) => item.sessionId)).toEqual([
      "s-new",
    ]);
  });
});

describe("who may read the files", () => {
  it("creates the folder and each recording for the BFF's user alone", async () => {
    const folder = path.join(dir, "recordings");
    const store = new RecordingStore({
      storage: new FileRecordingStorage(folder),
      maxBytes: 10_000,
      retentionMs: day,
      sessionOf: async () => ({ labId: "lab-one", section: null }),
      log: { warn: (details: unknown) => void warnings.push(details) },
    });
    store
      .recorderFor({ id: "s-private", owner: "alice" }, { cols: 80, rows: 24 })
      .output(Buffer.from("secret"));
    await eventually(
      () => store.find("s-private"),
      (found) => found !== undefined,
      { what: "the recording" },
    );
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(folder, "s-private.cast"))).mode & 0o777).toBe(0o600);
  });
});
