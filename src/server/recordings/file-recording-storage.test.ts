// The recording storage contract on a real folder (DATA_DIR/recordings), and listing a folder of
// many recordings: under a small limit of open files, and while the retention sweep empties it.
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { text } from "node:stream/consumers";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repositoryInFreshFolder } from "../db/testing/repository-harness.ts";
import { eventLine, headerLine } from "./asciicast.ts";
import { FileRecordingStorage } from "./file-recording-storage.ts";
import { RecordingStore } from "./recording-store.ts";
import { floodText } from "./testing/cast.ts";
import { aHeader, describeRecordingStorageContract } from "./testing/storage-contract.ts";

describeRecordingStorageContract("files", () =>
  repositoryInFreshFolder((dataDir) => new FileRecordingStorage(path.join(dataDir, "recordings"))),
);

const listScript = path.join(import.meta.dirname, "testing", "list-recordings.ts");

describe("a folder of many recordings", () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "many-recordings-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function writeRecordings(count: number): Promise<void> {
    await Promise.all(
      Array.from({ length: count }, (_, index) =>
        writeFile(
          path.join(dir, `s-${index}.cast`),
          headerLine(aHeader(`s-${index}`)) + eventLine(0.1, "o", "hi"),
        ),
      ),
    );
  }

  it("lists them all within a small limit of open files", async () => {
    await writeRecordings(600);
    const { stdout } = await promisify(execFile)("sh", [
      "-c",
      'ulimit -n 160 && exec "$0" --import tsx "$1" "$2"',
      process.execPath,
      listScript,
      dir,
    ]);
    expect(stdout.trim()).toBe("600");
  });

  it("lists what is left while the retention sweep removes them", async () => {
    const storage = new FileRecordingStorage(dir);
    for (let round = 0; round < 5; round += 1) {
      await writeRecordings(200);
      const [listed, removed] = await Promise.all([
        storage.list({}),
        storage.removeWrittenBefore(new Date(Date.now() + 60_000)),
      ]);
      expect(removed).toBe(200);
      expect(listed.length).toBeLessThanOrEqual(200);
      for (const recording of listed) expect(recording.header.lab_console.owner).toBe("alice");
    }
  });
});

describe("the recordings folder", () => {
  it("is made again when it was removed behind the console's back", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "recordings-folder-"));
    try {
      const storage = new FileRecordingStorage(path.join(dataDir, "recordings"));
      const batch = (text: string) => ({ header: aHeader("s-again"), text });
      await storage.append("s-again", batch(eventLine(0.1, "o", "first")));
      await rm(storage.dir, { recursive: true, force: true });
      await storage.append("s-again", batch(eventLine(0.3, "o", "after")));
      const found = await storage.find("s-again");
      expect(found?.header.lab_console.sessionId).toBe("s-again");
      expect(found?.bytes).toBe(
        Buffer.byteLength(headerLine(aHeader("s-again")) + eventLine(0.3, "o", "after")),
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("a recording measured while a batch is being appended", () => {
  it("ends at its last whole line: the file's size grows page by page as a write goes on", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "recording-partial-"));
    try {
      const storage = new FileRecordingStorage(dir);
      const whole = headerLine(aHeader("s-partial")) + eventLine(0.1, "o", "whole");
      // What a reader can see of a batch whose write is under way (or was cut short by a crash).
      await writeFile(path.join(dir, "s-partial.cast"), `${whole}[0.2,"o","half of a li`);
      const found = await storage.find("s-partial");
      expect(found?.bytes).toBe(Buffer.byteLength(whole));
      expect(await text((await storage.read("s-partial", found!.bytes))!)).toBe(whole);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("a flooded recording's tail", () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "recording-tails-"));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("is a file beside the recording, for the BFF's user alone, and no recording of its own", async () => {
    const folder = path.join(dataDir, "recordings");
    const storage = new FileRecordingStorage(folder);
    const warnings: unknown[] = [];
    const store = new RecordingStore({
      storage,
      maxBytes: 64 * 1024,
      tailBytes: 8 * 1024,
      retentionMs: 86_400_000,
      sessionOf: async () => ({ labId: "lab-one", section: null }),
      log: { warn: (details: unknown) => void warnings.push(details) },
    });
    const recorder = store.recorderFor({ id: "s-tailed", owner: "alice" }, { cols: 80, rows: 24 });
    recorder.output(Buffer.from(floodText(200 * 1024)));
    await recorder.close();

    // Replaced whole through a temporary file: none is left once it is stored.
    expect((await readdir(folder)).sort()).toEqual(["s-tailed.cast", "s-tailed.tail.cast"]);
    for (const name of ["s-tailed.cast", "s-tailed.tail.cast"]) {
      expect((await stat(path.join(folder, name))).mode & 0o777).toBe(0o600);
    }
    const listed = await storage.list({});
    expect(listed.map((recording) => recording.header.lab_console.sessionId)).toEqual(["s-tailed"]);
    expect(listed[0]!.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(warnings).toEqual([]);
  });

  it("is swept when a crash left it without its recording, as is a tail never renamed into place", async () => {
    const storage = new FileRecordingStorage(dataDir);
    const leftovers = ["s-orphan.tail.cast", "s-crashed.tail.0123abcd.tmp"];
    for (const name of leftovers) await writeFile(path.join(dataDir, name), eventLine(0.1, "o", "left"));
    await writeFile(path.join(dataDir, "s-fresh.tail.89abcdef.tmp"), eventLine(0.1, "o", "being written"));
    const old = new Date(Date.now() - 86_400_000);
    for (const name of leftovers) await utimes(path.join(dataDir, name), old, old);

    expect(await storage.removeWrittenBefore(new Date(Date.now() - 60_000))).toBe(0);
    expect(await readdir(dataDir)).toEqual(["s-fresh.tail.89abcdef.tmp"]);
  });
});
