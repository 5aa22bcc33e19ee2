// The console recordings, kept for the retention period after their last write whether or not the
// session still exists. What is the same wherever they are kept lives here (one recorder per console,
// the size cap and its tail, the header naming owner, lab and section, the sweep); where lives in a
// RecordingStorage.
import type { Readable } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import { recordingIdOf, type RecordingSummary, type Session } from "../../common/api.ts";
import { graphicalConsole, serialConsole } from "../../common/console-protocol.ts";
import { screenRecordingFormat } from "../../common/screen-recording.ts";
import type { RecordingHeader } from "./asciicast.ts";
import type { RecordingBatch, RecordingStorage, StoredRecording } from "./recording-storage.ts";
import { RecordingWriter } from "./recording-writer.ts";
import { ScreenRecordingWriter } from "./screen-recording-writer.ts";
import {
  CoalescingScreenRecorder,
  defaultScreenRecorderOptions,
  type ScreenRecorder,
  type ScreenRecorderOptions,
} from "./screen-recorder.ts";

export interface RecordingStoreOptions {
  storage: RecordingStorage;
  /** The cap of each recording, head and tail together. */
  maxBytes: number;
  /**
   * The share of the cap that keeps a flooded recording's last output (recording-writer.ts): at least
   * 1 KiB and at most half the cap. Default 1 MiB, or a quarter of the cap when that is less.
   */
  tailBytes?: number;
  /** The least time between two writes of a recording's tail while output flows (default 1 s). */
  tailWriteIntervalMs?: number;
  retentionMs: number;
  /** The session's lab and section, for the header; undefined when the session is unknown. */
  sessionOf(sessionId: string): Promise<Pick<Session, "labId" | "section"> | undefined>;
  log: Pick<FastifyBaseLogger, "warn">;
  /** How long a closing recorder waits for its output to be stored (default 5 s). */
  closeTimeoutMs?: number;
  /** Screen recordings: how often changes are written (default 4 a second) and keyframes come. */
  screen?: Partial<ScreenRecorderOptions & { keyframeEveryMs: number; keyframeEveryBytes: number }>;
}

/** One console's recorder, as the console hub uses it: output is handed over as it arrives. */
export interface ConsoleRecorder {
  output(chunk: Buffer): void;
  /**
   * No more output: resolves once everything handed over is stored (or dropped), or after the close
   * timeout with a warning, so that a slow storage never holds a console up for long. Never rejects.
   */
  close(): Promise<void>;
}

/** How long output goes unrecorded after the storage failed to open a recording. */
const reopenDelayMs = 5_000;
const defaultCloseTimeoutMs = 5_000;
const defaultTailBytes = 1024 * 1024;
/** Room for the gap marker and a few lines of output. */
const minTailBytes = 1024;
const defaultTailWriteIntervalMs = 1_000;
/** A screen recording's keyframes: at the first change 30 s after the last, or after 256 KiB of changes. */
const defaultKeyframeEveryMs = 30_000;
const defaultKeyframeEveryBytes = 256 * 1024;
/**
 * How often a download finds and reads a recording whose tail was replaced in between. A tail is
 * replaced at most once a second and the two take milliseconds, so even a second try is rare.
 */
const downloadAttempts = 5;

/** A recording whose tail was replaced between every find and read of a download. */
export class RecordingBusyError extends Error {
  constructor(sessionId: string) {
    super(`The recording of session ${sessionId} changed while it was read. Try again.`);
  }
}

export class RecordingStore {
  /**
   * The recorders of each session still storing their last output: the next recorder of the same
   * session (the console reopened here) reads where the recording stands only after them.
   */
  private readonly closing = new Map<string, Promise<void>>();

  private readonly tailBytes: number;

  constructor(private readonly options: RecordingStoreOptions) {
    const { maxBytes } = options;
    this.tailBytes = options.tailBytes ?? Math.min(defaultTailBytes, Math.floor(maxBytes / 4));
    if (this.tailBytes < minTailBytes || this.tailBytes > maxBytes / 2) {
      throw new RangeError(
        `A recording's tail must hold between ${minTailBytes} bytes and half the size cap (${maxBytes} bytes); ` +
          `it is ${this.tailBytes}.`,
      );
    }
  }

  /**
   * A recorder for one console. The recording is opened on the first output (a console that never
   * connected leaves none); output arriving meanwhile keeps its arrival time. A console that moved
   * here from another replica, or reconnected, continues the recording it had: the previous holder
   * closes its recorder before it lets the console go.
   */
  recorderFor(
    session: { id: string; owner: string },
    size: { cols: number; rows: number },
    terminal = serialConsole,
  ): ConsoleRecorder {
    const recording = { ...session, recordingId: recordingIdOf(session.id, terminal), terminal };
    let writer: Promise<RecordingWriter | undefined> | undefined;
    // Once open, output goes to it straight away: a promise turn per chunk showed in a flood's profile.
    let open: RecordingWriter | undefined;
    let failedAt = -Infinity;
    let closed: Promise<void> | undefined;
    return {
      output: (chunk) => {
        if (closed) return;
        const at = Date.now();
        if (open) {
          open.output(chunk, at);
          return;
        }
        // Storage that could not be reached is tried again a while later, not on every chunk.
        if (!writer && at - failedAt < reopenDelayMs) return;
        writer ??= this.openWriter(recording, size).then((opened) => {
          if (!opened) {
            failedAt = Date.now();
            writer = undefined;
          }
          // Output queued on the opening still goes in first: it is delivered in this same turn.
          open = opened;
          return opened;
        });
        void writer.then((opened) => opened?.output(chunk, at));
      },
      close: () => {
        closed ??= this.closeRecorder(recording.recordingId, writer);
        return closed;
      },
    };
  }

  /**
   * A recorder for a VM's screen (docs/vnc.md, "Screen recordings"), kept beside its consoles'
   * recordings under the same cap, retention and rules. The recording is opened on the first change;
   * one continued here or on another replica goes on with a keyframe.
   */
  screenRecorderFor(session: { id: string; owner: string }): ScreenRecorder {
    const recording = {
      ...session,
      recordingId: recordingIdOf(session.id, graphicalConsole),
      terminal: graphicalConsole,
    };
    const coalescing = new CoalescingScreenRecorder({
      ...defaultScreenRecorderOptions,
      ...this.options.screen,
    });
    let writer: Promise<ScreenRecordingWriter | undefined> | undefined;
    let failedAt = -Infinity;
    let closed: Promise<void> | undefined;
    return {
      update: (screen, changed) => {
        if (closed) return;
        coalescing.update(screen, changed);
        if (writer || Date.now() - failedAt < reopenDelayMs) return;
        const size = { width: screen.width, height: screen.height };
        writer = this.openScreenWriter(recording, size).then((opened) => {
          if (opened) coalescing.attach(opened);
          else {
            failedAt = Date.now();
            writer = undefined;
          }
          return opened;
        });
      },
      close: () => {
        if (closed) return closed;
        // The last changes go to the writer before it flushes; one still opening gets them as it opens.
        const last = writer?.then((opened) => {
          coalescing.close();
          return opened;
        });
        if (!last) coalescing.close();
        closed = this.closeRecorder(recording.recordingId, last);
        return closed;
      },
    };
  }

  find(sessionId: string): Promise<StoredRecording | undefined> {
    return this.options.storage.find(sessionId);
  }

  /** The recording as `find` measured it, `bytes` long; undefined when it is gone or changed since. */
  read(sessionId: string, bytes: number): Promise<Readable | undefined> {
    return this.options.storage.read(sessionId, bytes);
  }

  /**
   * A recording to send, if `mayRead` allows it (it sees the header, hence the owner, before a byte is
   * read), with a body exactly `recording.bytes` long. Undefined when there is none or it is not
   * allowed; rejects with RecordingBusyError when its tail kept changing under every attempt.
   */
  async download(
    sessionId: string,
    terminal: number,
    mayRead: (recording: StoredRecording) => boolean,
  ): Promise<{ recording: StoredRecording; body: Readable } | undefined> {
    const { storage } = this.options;
    const id = recordingIdOf(sessionId, terminal);
    for (let attempt = 0; attempt < downloadAttempts; attempt += 1) {
      const recording = await storage.find(id);
      if (!recording || !mayRead(recording)) return undefined;
      // Undefined: swept (the next find says so) or its tail replaced since it was found.
      const body = await storage.read(id, recording.bytes);
      if (body) return { recording, body };
    }
    throw new RecordingBusyError(sessionId);
  }

  /** Newest first: those `mayList` allows (it sees each header, hence owner and section). */
  async list(
    filter: { labId?: string; owner?: string },
    mayList: (recording: StoredRecording) => boolean,
  ): Promise<RecordingSummary[]> {
    return (await this.options.storage.list(filter)).filter(mayList).map(summarize);
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

  private closeRecorder(
    sessionId: string,
    writer: Promise<{ flushed(): Promise<void> } | undefined> | undefined,
  ): Promise<void> {
    const { log, closeTimeoutMs = defaultCloseTimeoutMs } = this.options;
    // Output handed over while the writer was opening is queued on `writer` before this waits on it.
    const stored = writer?.then((opened) => opened?.flushed());
    if (!stored) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), closeTimeoutMs);
    });
    const done = Promise.race([stored, late]).then((outcome) => {
      clearTimeout(timer);
      if (outcome === "late") {
        log.warn(
          { sessionId, timeoutMs: closeTimeoutMs },
          "console recording not stored in time as its console closed; its end may be missing or out of order",
        );
      }
    });
    this.closing.set(sessionId, done);
    void done.then(() => {
      if (this.closing.get(sessionId) === done) this.closing.delete(sessionId);
    });
    return done;
  }

  private async openWriter(
    session: { id: string; owner: string; recordingId: string; terminal: number },
    size: { cols: number; rows: number },
  ): Promise<RecordingWriter | undefined> {
    return this.open(
      session,
      { width: size.cols, height: size.rows },
      (storage, header, existing, tail) =>
        new RecordingWriter({
          ...storage,
          header,
          headBytes: existing ? existing.bytes - existing.tailBytes : 0,
          tail,
          maxBytes: this.options.maxBytes,
          tailBytes: this.tailBytes,
          tailWriteIntervalMs: this.options.tailWriteIntervalMs ?? defaultTailWriteIntervalMs,
        }),
    );
  }

  private async openScreenWriter(
    session: { id: string; owner: string; recordingId: string; terminal: number },
    size: { width: number; height: number },
  ): Promise<ScreenRecordingWriter | undefined> {
    const { screen } = this.options;
    return this.open(
      session,
      size,
      (storage, header, existing, tail) =>
        new ScreenRecordingWriter({
          ...storage,
          header,
          headBytes: existing ? existing.bytes - existing.tailBytes : 0,
          tail,
          maxBytes: this.options.maxBytes,
          tailBytes: this.tailBytes,
          tailWriteIntervalMs: this.options.tailWriteIntervalMs ?? defaultTailWriteIntervalMs,
          keyframeEveryMs: screen?.keyframeEveryMs ?? defaultKeyframeEveryMs,
          keyframeEveryBytes: screen?.keyframeEveryBytes ?? defaultKeyframeEveryBytes,
        }),
    );
  }

  /**
   * Finds where a recording stands (after any recorder of it still closing here) and makes its writer:
   * a new recording's header names the session, its owner, lab and section; an existing one's is kept.
   */
  private async open<Writer>(
    session: { id: string; owner: string; recordingId: string; terminal: number },
    size: { width: number; height: number },
    make: (
      storage: Pick<RecordingWriterStorage, "append" | "replaceTail" | "onError">,
      header: RecordingHeader,
      existing: StoredRecording | undefined,
      tail: string | undefined,
    ) => Writer,
  ): Promise<Writer | undefined> {
    const { storage, log } = this.options;
    const id = session.recordingId;
    const screen = session.terminal === graphicalConsole;
    await this.closing.get(id);
    try {
      const existing = await storage.find(id);
      // A tail means a full head: the recorder goes on rolling the tail it left.
      const tail = existing && existing.tailBytes > 0 ? ((await storage.tail(id)) ?? "") : undefined;
      const facts = existing ? undefined : await this.options.sessionOf(session.id);
      const header: RecordingHeader = existing?.header ?? {
        version: 2,
        width: size.width,
        height: size.height,
        timestamp: Math.floor(Date.now() / 1000),
        title:
          session.terminal === serialConsole
            ? `Lab Console session ${session.id}`
            : screen
              ? `Lab Console session ${session.id}, screen`
              : `Lab Console session ${session.id}, terminal ${session.terminal}`,
        ...(screen && { format: screenRecordingFormat }),
        lab_console: {
          sessionId: session.id,
          owner: session.owner,
          labId: facts?.labId ?? "unknown",
          ...(facts?.section && { section: facts.section }),
          ...(session.terminal !== serialConsole && { terminal: session.terminal }),
        },
      };
      return make(
        {
          append: (batch) => storage.append(id, batch),
          replaceTail: (batch) => storage.replaceTail(id, batch),
          onError: (error) =>
            log.warn(
              { sessionId: session.id, err: error },
              screen ? "screen recording write failed" : "console recording write failed",
            ),
        },
        header,
        existing,
        tail,
      );
    } catch (error) {
      log.warn(
        { sessionId: session.id, err: error },
        screen ? "screen recording could not be opened" : "console recording could not be opened",
      );
      return undefined;
    }
  }
}

interface RecordingWriterStorage {
  append(batch: RecordingBatch): Promise<void>;
  replaceTail(batch: RecordingBatch): Promise<void>;
  onError(error: unknown): void;
}

function summarize(recording: StoredRecording): RecordingSummary {
  const { sessionId, owner, labId, terminal } = recording.header.lab_console;
  return {
    sessionId,
    ...(terminal !== undefined && { terminal }),
    owner,
    labId,
    startedAt: new Date(recording.header.timestamp * 1000).toISOString(),
    lastWrittenAt: recording.lastWrittenAt.toISOString(),
    bytes: recording.bytes,
  };
}
