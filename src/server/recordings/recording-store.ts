// The console recordings, kept for the retention period after their last write whether or not the
// session still exists. What is the same wherever they are kept lives here (one recorder per console,
// the size cap, the header naming owner and lab, the sweep); where lives in a RecordingStorage.
import type { Readable } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import type { RecordingSummary } from "../../common/api.ts";
import type { RecordingHeader } from "./asciicast.ts";
import type { RecordingStorage, StoredRecording } from "./recording-storage.ts";
import { RecordingWriter } from "./recording-writer.ts";

export interface RecordingStoreOptions {
  storage: RecordingStorage;
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

/** How long output goes unrecorded after the storage failed to open a recording. */
const reopenDelayMs = 5_000;

export class RecordingStore {
  constructor(private readonly options: RecordingStoreOptions) {}

  /**
   * A recorder for one console. The recording is opened on the first output (a console that never
   * connected leaves none); output arriving meanwhile keeps its arrival time. A console that moved
   * here from another replica, or reconnected, continues the recording it had.
   */
  recorderFor(session: { id: string; owner: string }, size: { cols: number; rows: number }): ConsoleRecorder {
    let writer: Promise<RecordingWriter | undefined> | undefined;
    let failedAt = -Infinity;
    return {
      output: (chunk) => {
        const at = Date.now();
        // Storage that could not be reached is tried again a while later, not on every chunk.
        if (!writer && at - failedAt < reopenDelayMs) return;
        writer ??= this.openWriter(session, size).then((opened) => {
          if (!opened) {
            failedAt = Date.now();
            writer = undefined;
          }
          return opened;
        });
        void writer.then((opened) => opened?.output(chunk, at));
      },
    };
  }

  find(sessionId: string): Promise<StoredRecording | undefined> {
    return this.options.storage.find(sessionId);
  }

  /** The first `bytes` bytes of a recording, as `find` measured it. */
  read(sessionId: string, bytes: number): Promise<Readable> {
    return this.options.storage.read(sessionId, bytes);
  }

  /** Newest first. */
  async list(filter: { labId?: string; owner?: string }): Promise<RecordingSummary[]> {
    const found = await this.options.storage.list(filter);
    return found.map(summarize).sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  }

  /** Removes recordings last written longer ago than the retention period; returns how many. */
  sweep(now: Date = new Date()): Promise<number> {
    return this.options.storage.removeWrittenBefore(new Date(now.getTime() - this.options.retentionMs));
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

  private async openWriter(
    session: { id: string; owner: string },
    size: { cols: number; rows: number },
  ): Promise<RecordingWriter | undefined> {
    const { storage, log } = this.options;
    try {
      const existing = await storage.find(session.id);
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
        append: (batch) => storage.append(session.id, batch),
        header,
        existingBytes: existing?.bytes ?? 0,
        capped: existing?.capped ?? false,
        maxBytes: this.options.maxBytes,
        onError: (error) => log.warn({ sessionId: session.id, err: error }, "console recording write failed"),
      });
    } catch (error) {
      log.warn({ sessionId: session.id, err: error }, "console recording could not be opened");
      return undefined;
    }
  }
}

function summarize(recording: StoredRecording): RecordingSummary {
  const { sessionId, owner, labId } = recording.header.lab_console;
  return {
    sessionId,
    owner,
    labId,
    startedAt: new Date(recording.header.timestamp * 1000).toISOString(),
    lastWrittenAt: recording.lastWrittenAt.toISOString(),
    bytes: recording.bytes,
  };
}
