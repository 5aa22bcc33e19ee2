// The store on a real folder (the file storage): the size cap ends a recording with a marker, the
// retention sweep removes only what is past its time, and the files are the BFF's alone.
import { mkdtemp, readFile, rm, stat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventually } from "../testing/test-bff.ts";
import { sizeCapMarker } from "./asciicast.ts";
import { FileRecordingStorage } from "./file-recording-storage.ts";
import { RecordingStore } from "./recording-store.ts";

let dir: string;
let warnings: unknown[];
const day = 86_400_000;

function storeWith(maxBytes: number): RecordingStore {
  return new RecordingStore({
    storage: new FileRecordingStorage(dir),
    maxBytes,
    retentionMs: 7 * day,
    labOf: async () => "lab-one",
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

describe("the size cap", () => {
  it("stops a recording with a final marker, and a later console does not append to it", async () => {
    const store = storeWith(1_000);
    const recorder = store.recorderFor({ id: "s-capped", owner: "alice" }, { cols: 80, rows: 24 });
    for (let line = 0; line < 50; line += 1) recorder.output(Buffer.from(`line ${line}\r\n`));
    const file = path.join(dir, "s-capped.cast");
    const cast = await eventually(
      () => readFile(file, "utf8").catch(() => ""),
      (text) => text.includes(sizeCapMarker),
      { what: "the cap marker" },
    );
    expect(Buffer.byteLength(cast)).toBeLessThanOrEqual(1_000);
    expect(JSON.parse(cast.trimEnd().split("\n").at(-1)!)).toEqual([expect.any(Number), "m", sizeCapMarker]);
    expect(cast).toContain("line 0");

    const later = store.recorderFor({ id: "s-capped", owner: "alice" }, { cols: 80, rows: 24 });
    later.output(Buffer.from("after the cap\r\n"));
    const sentinel = store.recorderFor({ id: "s-other", owner: "alice" }, { cols: 80, rows: 24 });
    sentinel.output(Buffer.from("x"));
    await eventually(
      () => store.find("s-other"),
      (found) => found !== undefined,
    );
    expect(await readFile(file, "utf8")).toBe(cast);
  });

  it("keeps a character split across chunks whole", async () => {
    const store = storeWith(10_000);
    const euro = Buffer.from("€");
    const recorder = store.recorderFor({ id: "s-split", owner: "bob" }, { cols: 80, rows: 24 });
    recorder.output(Buffer.concat([Buffer.from("a"), euro.subarray(0, 1)]));
    recorder.output(Buffer.concat([euro.subarray(1), Buffer.from("b")]));
    const cast = await eventually(
      () => readFile(path.join(dir, "s-split.cast"), "utf8").catch(() => ""),
      (text) => text.includes("b"),
    );
    const texts = cast
      .trimEnd()
      .split("\n")
      .slice(1)
      .map((line) => (JSON.parse(line) as [number, string, string])[2]);
    expect(texts.join("")).toBe("a€b");
  });
});

describe("the retention sweep", () => {
  it("removes recordings last written before the retention period, and keeps the rest", async () => {
    const store = storeWith(10_000);
    for (const id of ["s-old", "s-new"]) {
      store.recorderFor({ id, owner: "alice" }, { cols: 80, rows: 24 }).output(Buffer.from("hi"));
    }
    await eventually(
      () => store.list({}),
      (items) => items.length === 2,
    );
    const old = new Date(Date.now() - 8 * day);
    await utimes(path.join(dir, "s-old.cast"), old, old);

    expect(await store.sweep()).toBe(1);
    expect(await stat(path.join(dir, "s-old.cast")).catch(() => undefined)).toBeUndefined();
    expect((await store.list({ labId: "lab-one" })).map((item) => item.sessionId)).toEqual(["s-new"]);
  });
});

describe("who may read the files", () => {
  it("creates the folder and each recording for the BFF's user alone", async () => {
    const folder = path.join(dir, "recordings");
    const store = new RecordingStore({
      storage: new FileRecordingStorage(folder),
      maxBytes: 10_000,
      retentionMs: day,
      labOf: async () => "lab-one",
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
