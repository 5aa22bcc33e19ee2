// The console recordings in DATA_DIR/recordings: <session>.cast per session, append-only, kept for the
// retention period after their last write whether or not the session still exists.
import { mkdir, open, readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import type { RecordingSummary } from "../../common/api.ts";
import { parseHeader, sizeCapMarker, type RecordingHeader } from "./asciicast.ts";
import { RecordingWriter } from "./recording-writer.ts";

export interface RecordingStoreOptions {
  dir: string;
  maxBytes: number;
  retentionMs: number;
  /** The lab a session runs, for the header; undefined when the session is unknown. */
  labOf(sessionId: string): Promise<string | undefined>;
  log: Pick<FastifyBaseLogger, "warn">;
}

/** One console's recorder, as the console hub uses it: output is handed over as it arrives. */
export interface ConsoleRecorder {
  output(chunk: Buffer): void;
}

export interface FoundRecording {
  file: string;
  header: RecordingHeader;
  bytes: number;
  modifiedAt: Date;
}

const sessionIdPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const headerProbeBytes = 4096;

export class RecordingStore {
  constructor(private readonly options: RecordingStoreOptions) {}

  get dir(): string {
    return this.options.dir;
  }

  /**
   * A recorder for one console. The file is opened on the first output (a console that never
   * connected leaves no recording); output arriving meanwhile keeps its arrival time.
   */
  recorderFor(session: { id: string; owner: string }, size: { cols: number; rows: number }): ConsoleRecorder {
    let writer: Promise<RecordingWriter | undefined> | undefined;
    return {
      output: (chunk) => {
        const at = Date.now();
        writer ??= this.openWriter(session, size);
        void writer.then((opened) => opened?.output(chunk, at));
      },
    };
  }

  async find(sessionId: string): Promise<FoundRecording | undefined> {
    if (!sessionIdPattern.test(sessionId)) return undefined;
    const file = this.fileOf(sessionId);
    const info = await stat(file).catch(() => undefined);
    if (!info) return undefined;
    const header = await readHeader(file);
    return header && { file, header, bytes: info.size, modifiedAt: info.mtime };
  }

  async list(filter: { labId?: string; owner?: string }): Promise<RecordingSummary[]> {
    const names = await readdir(this.options.dir).catch(() => []);
    const found = await Promise.all(
      names.filter((name) => name.endsWith(".cast")).map((name) => this.find(name.slice(0, -5))),
    );
    return found
      .filter((recording): recording is FoundRecording => recording !== undefined)
      .map(summarize)
      .filter(
        (summary) =>
          (filter.labId === undefined || summary.labId === filter.labId) &&
          (filter.owner === undefined || summary.owner === filter.owner),
      )
      .sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  }

  /** Removes recordings last written longer ago than the retention period; returns how many. */
  async sweep(now: Date = new Date()): Promise<number> {
    const names = await readdir(this.options.dir).catch(() => []);
    let removed = 0;
    for (const name of names.filter((entry) => entry.endsWith(".cast"))) {
      const file = path.join(this.options.dir, name);
      const info = await stat(file).catch(() => undefined);
      if (info && now.getTime() - info.mtime.getTime() > this.options.retentionMs) {
        await rm(file, { force: true });
        removed += 1;
      }
    }
    return removed;
  }

  /** Sweeps now and then every intervalMs; returns the function that stops it. */
  sweepEvery(intervalMs: number): () => void {
    const sweep = () =>
      void this.sweep().catch((error: unknown) =>
        this.options.log.warn({ err: error }, "recording retention sweep failed"),
      );
    sweep();
    const timer = setInterval(sweep, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  private fileOf(sessionId: string): string {
    return path.join(this.options.dir, `${sessionId}.cast`);
  }

  private async openWriter(
    session: { id: string; owner: string },
    size: { cols: number; rows: number },
  ): Promise<RecordingWriter | undefined> {
    const { log } = this.options;
    try {
      await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
      const file = this.fileOf(session.id);
      const existing = await this.find(session.id);
      const header: RecordingHeader = existing?.header ?? {
        version: 2,
        width: size.cols,
        height: size.rows,
        timestamp: Math.floor(Date.now() / 1000),
        title: `Lab Console session ${session.id}`,
        lab_console: {
          sessionId: session.id,
          owner: session.owner,
          labId: (await this.options.labOf(session.id)) ?? "unknown",
        },
      };
      return new RecordingWriter({
        file,
        header,
        existingBytes: existing?.bytes ?? 0,
        capped: existing ? await endsWithCapMarker(file, existing.bytes) : false,
        maxBytes: this.options.maxBytes,
        onError: (error) => log.warn({ sessionId: session.id, err: error }, "console recording write failed"),
      });
    } catch (error) {
      log.warn({ sessionId: session.id, err: error }, "console recording could not be opened");
      return undefined;
    }
  }
}

function summarize(recording: FoundRecording): RecordingSummary {
  const { sessionId, owner, labId } = recording.header.lab_console;
  return {
    sessionId,
    owner,
    labId,
    startedAt: new Date(recording.header.timestamp * 1000).toISOString(),
    lastWrittenAt: recording.modifiedAt.toISOString(),
    bytes: recording.bytes,
  };
}

async function readHeader(file: string): Promise<RecordingHeader | undefined> {
  const text = await readSlice(file, 0, headerProbeBytes);
  const end = text.indexOf("\n");
  return end < 0 ? undefined : parseHeader(text.slice(0, end));
}

async function endsWithCapMarker(file: string, bytes: number): Promise<boolean> {
  const tail = await readSlice(file, Math.max(0, bytes - 256), 256);
  return tail.includes(JSON.stringify(sizeCapMarker));
}

async function readSlice(file: string, position: number, length: number): Promise<string> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
}
