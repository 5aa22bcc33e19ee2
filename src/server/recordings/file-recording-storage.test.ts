// The recording storage contract on a real folder (DATA_DIR/recordings), and listing a folder of
// many recordings: under a small limit of open files, and while the retention sweep empties it.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repositoryInFreshFolder } from "../db/testing/repository-harness.ts";
import { eventLine, headerLine } from "./asciicast.ts";
import { FileRecordingStorage } from "./file-recording-storage.ts";
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
      const batch = (text: string) => ({ header: aHeader("s-again"), text, capped: false });
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
