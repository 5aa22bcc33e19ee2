// Writes one session's console output to its recording. A recording is a head and a tail, so that a
// flood can hide neither how a session began nor how it went on (docs/console.md, "Recordings"). The
// head is appended to, in order, while it has room (the cap less the tail's share); nothing written
// there is ever rewritten. Once it is full, output rolls through the tail (rolling-tail.ts): the newest
// output that fits in its share, opened by a marker counting what it let go of. The tail is stored
// whole, in place of the one before, at most once per interval while output flows (a flood costs one
// write a second, not one per chunk) and once more when flushed. Output is kept as it arrives, raw and
// with its arrival time, and becomes asciicast only as it is stored (output-events.ts): each chunk the
// console relays costs the recording no more than keeping it.
import { headerLine, type RecordingHeader } from "./asciicast.ts";
import { OutputEventConverter, type OutputFrame } from "./output-events.ts";
import type { RecordingBatch } from "./recording-storage.ts";
import { RollingTail } from "./rolling-tail.ts";

export interface RecordingWriterOptions {
  /** Stores one batch at the head's end, after the previous one (recording-storage.ts). */
  append(batch: RecordingBatch): Promise<void>;
  /** Stores the tail in place of the one before. */
  replaceTail(batch: RecordingBatch): Promise<void>;
  /** The recording's header: the storage writes it first for a new recording. */
  header: RecordingHeader;
  /** Bytes already in the head, header line included (0 for a new recording). */
  headBytes: number;
  /** The stored tail's event lines when the recording has a tail (its head is full); else undefined. */
  tail: string | undefined;
  /** The whole recording's cap: head and tail. */
  maxBytes: number;
  /** The tail's share of the cap. */
  tailBytes: number;
  /** The least time between two writes of the tail while output flows. */
  tailWriteIntervalMs: number;
  /** A batch or a tail that could not be stored is dropped: the console goes on either way. */
  onError(error: unknown): void;
}

/**
 * The most output the drain turns into event lines at a time, so that a storage slow to take a batch
 * (output piling up meanwhile) does not make the next one a long pause for every console.
 */
const maxBatchOutputBytes = 1024 * 1024;

export class RecordingWriter {
  private readonly startedAtMs: number;
  private readonly headLimit: number;
  /** Longer output is split over several events, so the tail always holds the newest of it. */
  private readonly maxLineBytes: number;
  private headBytes: number;
  /** Output for the head, as it arrived: the drain turns it into event lines. */
  private pending: OutputFrame[] = [];
  private pendingBytes = 0;
  private readonly headEvents: OutputEventConverter;
  /** Only a recorder whose head is full (or about to be) holds a tail. */
  private tail: RollingTail | undefined;
  private tailDue = false;
  private tailTimer: NodeJS.Timeout | undefined;
  private lastTailWriteMs = -Infinity;
  private flushing: Promise<void> | undefined;

  constructor(private readonly options: RecordingWriterOptions) {
    const { header, headBytes, tail, maxBytes, tailBytes } = options;
    this.headBytes = headBytes > 0 ? headBytes : Buffer.byteLength(headerLine(header));
    this.headLimit = maxBytes - tailBytes;
    this.maxLineBytes = Math.floor(tailBytes / 4);
    this.headEvents = new OutputEventConverter(this.maxLineBytes);
    this.startedAtMs = header.timestamp * 1000;
    if (tail !== undefined) this.tail = RollingTail.parse(tail, tailBytes, this.maxLineBytes);
  }

  /** Raw bytes as the VM printed them, kept as they are until they are stored. */
  output(chunk: Buffer, atMs: number = Date.now()): void {
    const frame = { bytes: chunk, seconds: Math.max(0, atMs - this.startedAtMs) / 1000 };
    if (!this.tail && this.pendingBytes < this.headLimit - this.headBytes) {
      this.pending.push(frame);
      this.pendingBytes += chunk.length;
      this.scheduleDrain();
      return;
    }
    // Output past the head's room even counted in raw bytes cannot go into the head (its event lines
    // are longer still). It goes to the tail at once, so that a storage slow to take the head's batches
    // makes this hold no more than the head's room; the drain hands the tail what the head could not
    // take, before it.
    if (!this.tail) {
      this.tail = new RollingTail(this.options.tailBytes, this.maxLineBytes);
      // The head filled up exactly, its last batch ending inside a character that this output
      // finishes: with nothing pending, no batch will hand the character's first bytes over.
      const unfinished = this.pending.length === 0 ? this.headEvents.takeUnfinished() : undefined;
      if (unfinished) this.tail.pushOlder([unfinished]);
    }
    this.tail.push(frame);
    this.scheduleTailWrite();
  }

  /** Resolves once everything accepted so far is stored (or dropped): the tail is written now. */
  async flushed(): Promise<void> {
    if (this.tailTimer) {
      this.writeTailNext();
      this.scheduleDrain();
    }
    while (this.flushing) await this.flushing;
  }

  /** The tail is written by the drain once the head's batches are, whatever its interval says. */
  private writeTailNext(): void {
    clearTimeout(this.tailTimer);
    this.tailTimer = undefined;
    this.tailDue = true;
  }

  /**
   * Drains once this turn of the event loop is over, not at once: the output arriving meanwhile, or
   * while a write is under way, is stored together, so that a flood makes a few large batches.
   */
  private scheduleDrain(): void {
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  private scheduleTailWrite(): void {
    if (this.tailTimer || this.tailDue) return;
    const wait = Math.max(0, this.lastTailWriteMs + this.options.tailWriteIntervalMs - Date.now());
    this.tailTimer = setTimeout(() => {
      this.tailTimer = undefined;
      this.tailDue = true;
      this.scheduleDrain();
    }, wait);
  }

  /** One write at a time, the head's batches first: they are older than anything in the tail. */
  private async drain(): Promise<void> {
    const { header } = this.options;
    for (;;) {
      if (this.pending.length > 0) {
        const text = this.takeHeadBatch();
        if (text.length > 0) await this.store(() => this.options.append({ header, text }));
      } else if (this.tailDue && this.tail) {
        this.tailDue = false;
        this.lastTailWriteMs = Date.now();
        const text = this.tail.text();
        await this.store(() => this.options.replaceTail({ header, text }));
      } else {
        break;
      }
    }
    this.flushing = undefined;
  }

  /**
   * The next pending output's event lines that fit in the head. Once the head is full, or when output
   * past its room already went to the tail, the rest goes to the tail, before what is there.
   */
  private takeHeadBatch(): string {
    let count = 0;
    let bytes = 0;
    do {
      bytes += this.pending[count]!.bytes.length;
      count += 1;
    } while (count < this.pending.length && bytes + this.pending[count]!.bytes.length <= maxBatchOutputBytes);
    const events = this.headEvents.convert(this.pending.splice(0, count));
    this.pendingBytes -= bytes;
    let taken = 0;
    while (taken < events.length && this.headBytes + events[taken]!.bytes <= this.headLimit) {
      this.headBytes += events[taken]!.bytes;
      taken += 1;
    }
    // A full head takes nothing more, not even a line small enough to fit: that line would come after
    // output already in the tail.
    if (taken < events.length || (this.tail && this.pending.length === 0)) {
      const rest: OutputFrame[] = events
        .slice(taken)
        .map((event) => ({ bytes: Buffer.from(event.text), seconds: event.seconds }));
      const unfinished = this.headEvents.takeUnfinished();
      if (unfinished) rest.push(unfinished);
      rest.push(...this.pending);
      this.pending = [];
      this.pendingBytes = 0;
      this.tail ??= new RollingTail(this.options.tailBytes, this.maxLineBytes);
      this.tail.pushOlder(rest);
      // Written after this batch, by this drain: a flush waiting on it finds the tail stored.
      this.writeTailNext();
    }
    return events
      .slice(0, taken)
      .map((event) => event.line)
      .join("");
  }

  private async store(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.options.onError(error);
    }
  }
}
