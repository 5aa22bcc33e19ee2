// Recordings as files in DATA_DIR/recordings: the single-replica default. <session>.cast is the head,
// its first line the header, appended to; <session>.tail.cast, once the head is full, the tail,
// replaced whole by renaming a temporary <session>.tail.<random>.tmp over it, so that a reader opens
// either the old tail or the new one. The recording is the two files one after the other, its size
// their sizes and its last write the later mtime.
import { randomBytes } from "node:crypto";
import {
  mkdir,
  open,
  readFile,
  readdir,
  rename,
  rm,
  stat,
  writeFile,
  type FileHandle,
} from "node:fs/promises";
import type { Stats } from "node:fs";
import path from "node:path";
import { PassThrough, Readable } from "node:stream";
import { headerLine, parseHeader } from "./asciicast.ts";
import type { RecordingBatch, RecordingStorage, StoredRecording } from "./recording-storage.ts";

/** What a student's screen showed is for the BFF alone; staff read it through the API. */
const privateFolderMode = 0o700;
const privateFileMode = 0o600;
const sessionIdPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const headerProbeBytes = 4096;
const headersReadAtOnce = 16;
const newline = 0x0a;
const lineSearchBytes = 16 * 1024;
const headSuffix = ".cast";
const tailSuffix = ".tail.cast";
/** A tail being written, or one a crash left before its rename. */
const tempTailPattern = /^(.+)\.tail\.[0-9a-f]+\.tmp$/;

export class FileRecordingStorage implements RecordingStorage {
  private folder: Promise<unknown> | undefined;

  constructor(readonly dir: string) {}

  async find(sessionId: string): Promise<StoredRecording | undefined> {
    // The id becomes a file name: nothing but a session id may reach the file system.
    if (!sessionIdPattern.test(sessionId)) return undefined;
    // The tail before the head: there is a tail only once the head is full, so a head measured after
    // it is whole.
    const tail = await stat(this.tailOf(sessionId)).catch(unlessMissing);
    // One handle for the size and the header: the retention sweep may remove the file at any moment,
    // and a file once open reads on.
    const handle = await open(this.headOf(sessionId), "r").catch(unlessMissing);
    if (!handle) return undefined;
    try {
      const head = await readSlice(handle, 0, headerProbeBytes);
      const end = head.indexOf("\n");
      const header = end < 0 ? undefined : parseHeader(head.slice(0, end));
      if (!header) return undefined;
      // Measured after the header was read, so that it counts at least the header.
      const info = await handle.stat();
      const tailBytes = tail?.size ?? 0;
      return {
        header,
        bytes: (await wholeLinesIn(handle, info.size)) + tailBytes,
        tailBytes,
        lastWrittenAt: lastWriteOf(info, tail),
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

  async replaceTail(sessionId: string, batch: RecordingBatch): Promise<void> {
    // A tail comes after a header even when the head's first batch was lost.
    await this.append(sessionId, { header: batch.header, text: "" });
    const temp = path.join(this.dir, `${sessionId}.tail.${randomBytes(6).toString("hex")}.tmp`);
    try {
      await writeFile(temp, batch.text, { mode: privateFileMode, flag: "wx" });
      await rename(temp, this.tailOf(sessionId));
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async tail(sessionId: string): Promise<string | undefined> {
    if (!sessionIdPattern.test(sessionId)) return undefined;
    return readFile(this.tailOf(sessionId), "utf8").catch(unlessMissing);
  }

  async read(sessionId: string, bytes: number): Promise<Readable | undefined> {
    if (!sessionIdPattern.test(sessionId)) return undefined;
    // The tail first, for the reason find gives; read whole, it is the tail of this moment even if
    // another replaces it while the head is sent.
    const tail = await readFile(this.tailOf(sessionId)).catch(unlessMissing);
    const handle = await open(this.headOf(sessionId), "r").catch(unlessMissing);
    if (!handle) return undefined;
    try {
      const { size } = await handle.stat();
      // What find measured before a tail was stored: the head's first bytes.
      if (bytes <= size) return rangeOf(handle, bytes);
      // Else the head as find measures it (a line a crash cut short is no part of it) and the tail.
      const head = await wholeLinesIn(handle, size);
      if (tail && head + tail.length === bytes) return headThenTail(handle, head, tail);
    } catch (error) {
      await handle.close();
      throw error;
    }
    await handle.close();
    return undefined;
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
    // mtimeMs, not mtime: a Date rounds to the nearest millisecond, which may be after the cutoff.
    const isOld = (info: Stats | undefined) => info !== undefined && info.mtimeMs < cutoff.getTime();
    for (const name of await readdir(this.dir).catch(() => [])) {
      const file = path.join(this.dir, name);
      const id = headIdOf(name);
      if (id !== undefined) {
        const head = await stat(file).catch(() => undefined);
        const tail = await stat(this.tailOf(id)).catch(() => undefined);
        if (isOld(head) && (!tail || isOld(tail))) {
          // The tail first: a head left alone is still a whole recording, a tail alone is not.
          await rm(this.tailOf(id), { force: true });
          await rm(file, { force: true });
          removed += 1;
        }
        continue;
      }
      // What a crash left: a tail never renamed into place, or one whose head is gone (a tail with
      // its head goes with it, above).
      const orphanOf = name.endsWith(tailSuffix) ? name.slice(0, -tailSuffix.length) : undefined;
      if (!tempTailPattern.test(name) && orphanOf === undefined) continue;
      if (orphanOf !== undefined && (await stat(this.headOf(orphanOf)).catch(() => undefined))) continue;
      if (isOld(await stat(file).catch(() => undefined))) await rm(file, { force: true });
    }
    return removed;
  }

  async close(): Promise<void> {}

  private async openForAppend(sessionId: string): Promise<FileHandle> {
    this.folder ??= mkdir(this.dir, { recursive: true, mode: privateFolderMode });
    await this.folder;
    return open(this.headOf(sessionId), "a", privateFileMode);
  }

  private async sessionIds(): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => []);
    return names.map(headIdOf).filter((id) => id !== undefined);
  }

  private headOf(sessionId: string): string {
    return path.join(this.dir, `${sessionId}${headSuffix}`);
  }

  private tailOf(sessionId: string): string {
    return path.join(this.dir, `${sessionId}${tailSuffix}`);
  }
}

/** The session whose head the file is; undefined for tails and anything else. */
function headIdOf(name: string): string | undefined {
  if (!name.endsWith(headSuffix)) return undefined;
  const id = name.slice(0, -headSuffix.length);
  // "<id>.tail" has a dot, which no session id has.
  return sessionIdPattern.test(id) ? id : undefined;
}

function lastWriteOf(head: Stats, tail: Stats | undefined): Date {
  return tail && tail.mtime > head.mtime ? tail.mtime : head.mtime;
}

/** The first `length` bytes of an open file; the stream closes the file when it ends or is destroyed. */
function rangeOf(handle: FileHandle, length: number): Readable {
  if (length <= 0) {
    void handle.close();
    return Readable.from([]);
  }
  return handle.createReadStream({ start: 0, end: length - 1 });
}

/** The head's first `headBytes` bytes, then the tail; the file closes however the body ends. */
function headThenTail(handle: FileHandle, headBytes: number, tail: Buffer): Readable {
  const body = new PassThrough();
  const head = rangeOf(handle, headBytes);
  head.once("error", (error) => body.destroy(error));
  head.once("end", () => body.end(tail));
  head.pipe(body, { end: false });
  // A download the client gave up on: the head's stream is destroyed with it, closing the file.
  body.once("close", () => head.destroy());
  return body;
}

/**
 * `size` cut back to the end of the file's last whole line. An append is one write, but the file's
 * size grows page by page as it goes, so a size measured meanwhile can end inside its batch.
 */
async function wholeLinesIn(handle: FileHandle, size: number): Promise<number> {
  const last = Buffer.alloc(1);
  if (size === 0 || ((await handle.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] === newline)) {
    return size;
  }
  for (let end = size; end > 0;) {
    const from = Math.max(0, end - lineSearchBytes);
    const window = Buffer.alloc(end - from);
    const { bytesRead } = await handle.read(window, 0, window.length, from);
    const at = window.subarray(0, bytesRead).lastIndexOf(newline);
    if (at >= 0) return from + at + 1;
    end = from;
  }
  return 0;
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
