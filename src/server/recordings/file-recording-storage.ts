// Recordings as files in DATA_DIR/recordings, <session>.cast each: the single-replica default. The
// file is the recording: its first line is the header, its size the byte count, its mtime the last
// write, and a final size-cap marker says it is capped.
import { once } from "node:events";
import { createReadStream } from "node:fs";
import { mkdir, open, readdir, rm, stat, type FileHandle } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { headerLine, parseHeader, sizeCapMarker } from "./asciicast.ts";
import type { RecordingBatch, RecordingStorage, StoredRecording } from "./recording-storage.ts";

/** What a student's screen showed is for the BFF alone; staff read it through the API. */
const privateFolderMode = 0o700;
const privateFileMode = 0o600;
const sessionIdPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const headerProbeBytes = 4096;
const capProbeBytes = 256;
const headersReadAtOnce = 16;

export class FileRecordingStorage implements RecordingStorage {
  private folder: Promise<unknown> | undefined;

  constructor(readonly dir: string) {}

  async find(sessionId: string): Promise<StoredRecording | undefined> {
    // The id becomes a file name: nothing but a session id may reach the file system.
    if (!sessionIdPattern.test(sessionId)) return undefined;
    // One handle for the size, the header and the tail: the retention sweep may remove the file at
    // any moment, and a file once open reads on.
    const handle = await open(this.fileOf(sessionId), "r").catch(unlessMissing);
    if (!handle) return undefined;
    try {
      const info = await handle.stat();
      const head = await readSlice(handle, 0, headerProbeBytes);
      const end = head.indexOf("\n");
      const header = end < 0 ? undefined : parseHeader(head.slice(0, end));
      if (!header) return undefined;
      const tail = await readSlice(handle, Math.max(0, info.size - capProbeBytes), capProbeBytes);
      return {
        header,
        bytes: info.size,
        lastWrittenAt: info.mtime,
        capped: tail.includes(JSON.stringify(sizeCapMarker)),
      };
    } finally {
      await handle.close();
    }
  }

  async append(sessionId: string, batch: RecordingBatch): Promise<void> {
    // Made once, not per batch of a busy console; made again if it went away behind our back.
    const handle = await this.openForAppend(sessionId).catch(() => {
      this.folder = undefined;
      return this.openForAppend(sessionId);
    });
    try {
      // The size says whether the header is there yet, even when an earlier first batch was lost.
      const { size } = await handle.stat();
      await handle.write(size > 0 ? batch.text : headerLine(batch.header) + batch.text);
    } finally {
      await handle.close();
    }
  }

  async read(sessionId: string, bytes: number): Promise<Readable | undefined> {
    if (!sessionIdPattern.test(sessionId)) return undefined;
    const stream = createReadStream(this.fileOf(sessionId), { start: 0, end: Math.max(0, bytes - 1) });
    try {
      await once(stream, "open");
      return stream;
    } catch (error) {
      return unlessMissing(error);
    }
  }

  async list(filter: { labId?: string; owner?: string }): Promise<StoredRecording[]> {
    // A few at a time: thousands of recordings opened at once would run out of file descriptors.
    const found = await mapAtMost(await this.sessionIds(), headersReadAtOnce, (id) => this.find(id));
    return found
      .filter(
        (recording): recording is StoredRecording =>
          recording !== undefined &&
          (filter.labId === undefined || recording.header.lab_console.labId === filter.labId) &&
          (filter.owner === undefined || recording.header.lab_console.owner === filter.owner),
      )
      .sort((a, b) => b.header.timestamp - a.header.timestamp);
  }

  async removeWrittenBefore(cutoff: Date): Promise<number> {
    let removed = 0;
    for (const id of await this.sessionIds()) {
      const file = this.fileOf(id);
      const info = await stat(file).catch(() => undefined);
      if (info && info.mtime.getTime() < cutoff.getTime()) {
        await rm(file, { force: true });
        removed += 1;
      }
    }
    return removed;
  }

  async close(): Promise<void> {}

  private async openForAppend(sessionId: string): Promise<FileHandle> {
    this.folder ??= mkdir(this.dir, { recursive: true, mode: privateFolderMode });
    await this.folder;
    return open(this.fileOf(sessionId), "a", privateFileMode);
  }

  private async sessionIds(): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => []);
    return names.filter((name) => name.endsWith(".cast")).map((name) => name.slice(0, -".cast".length));
  }

  private fileOf(sessionId: string): string {
    return path.join(this.dir, `${sessionId}.cast`);
  }
}

async function readSlice(handle: FileHandle, position: number, length: number): Promise<string> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead).toString("utf8");
}

/** Undefined for a file that is not there (removed by the sweep meanwhile); any other error stands. */
async function unlessMissing(error: unknown): Promise<undefined> {
  if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
  throw error;
}

/** `work` on every item, at most `limit` at a time; the results in the items' order. */
async function mapAtMost<Item, Result>(
  items: readonly Item[],
  limit: number,
  work: (item: Item) => Promise<Result>,
): Promise<Result[]> {
  const results: Result[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
