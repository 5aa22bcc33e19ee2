// Writes one session's console output to its recording, as it arrives. A recording is a head and a
// tail, so that a flood can hide neither how a session began nor how it went on (docs/console.md,
// "Recordings"). The head is appended to, in order, while it has room (the cap less the tail's share);
// nothing written there is ever rewritten. Once it is full, output rolls through the tail: the most
// recent whole event lines that fit in its share, opened by a marker counting what it let go of. The
// tail is stored whole, in place of the one before, at most once per interval while output flows (a
// flood costs one write a second, not one per chunk) and once more when flushed. Timestamps are taken
// when output arrives, not when it reaches the storage.
import { StringDecoder } from "node:string_decoder";
import {
  eventLine,
  gapMarkerLine,
  headerLine,
  parseGapMarker,
  type RecordingGap,
  type RecordingHeader,
} from "./asciicast.ts";
import type { RecordingBatch } from "./recording-storage.ts";

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

interface Event {
  line: string;
  /** The line's length in bytes. */
  bytes: number;
  /** The output it holds, in bytes as UTF-8: what the gap marker counts. */
  outputBytes: number;
  seconds: number;
}

export class RecordingWriter {
  private readonly decoder = new StringDecoder("utf8");
  private readonly startedAtMs: number;
  private readonly headLimit: number;
  /** Longer output is split over several events, so the tail always holds the newest of it. */
  private readonly maxLineBytes: number;
  private headBytes: number;
  private pendingHead: string[] = [];
  /** Only a recorder whose head is full holds its tail in memory. */
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
    this.startedAtMs = header.timestamp * 1000;
    if (tail !== undefined) this.tail = RollingTail.parse(tail, tailBytes);
  }

  /** Raw bytes as the VM printed them; a UTF-8 character split across chunks is kept whole. */
  output(chunk: Buffer, atMs: number = Date.now()): void {
    const text = this.decoder.write(chunk);
    if (text.length === 0) return;
    const seconds = Math.max(0, atMs - this.startedAtMs) / 1000;
    for (const event of outputEvents(seconds, text, this.maxLineBytes)) {
      if (!this.tail && this.headBytes + event.bytes <= this.headLimit) {
        this.headBytes += event.bytes;
        this.pendingHead.push(event.line);
        continue;
      }
      // A full head takes nothing more, not even a line small enough to fit: that line would come
      // after output already in the tail.
      this.tail ??= new RollingTail(this.options.tailBytes);
      this.tail.push(event);
      this.scheduleTailWrite();
    }
    if (this.pendingHead.length > 0) this.flushing ??= this.drain();
  }

  /** Resolves once everything accepted so far is stored (or dropped): the tail is written now. */
  async flushed(): Promise<void> {
    if (this.tailTimer) {
      clearTimeout(this.tailTimer);
      this.tailTimer = undefined;
      this.tailDue = true;
      this.flushing ??= this.drain();
    }
    while (this.flushing) await this.flushing;
  }

  private scheduleTailWrite(): void {
    if (this.tailTimer || this.tailDue) return;
    const wait = Math.max(0, this.lastTailWriteMs + this.options.tailWriteIntervalMs - Date.now());
    this.tailTimer = setTimeout(() => {
      this.tailTimer = undefined;
      this.tailDue = true;
      this.flushing ??= this.drain();
    }, wait);
  }

  /** One write at a time, the head's batches first: they are older than anything in the tail. */
  private async drain(): Promise<void> {
    const { header } = this.options;
    for (;;) {
      if (this.pendingHead.length > 0) {
        const text = this.pendingHead.join("");
        this.pendingHead = [];
        await this.store(() => this.options.append({ header, text }));
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

  private async store(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.options.onError(error);
    }
  }
}

/** The newest events that fit in `limit` bytes together with the gap marker, which counts the rest. */
class RollingTail {
  private events: Event[] = [];
  /** Events before this index were let go of; the array is compacted now and then. */
  private first = 0;
  private eventBytes = 0;
  private gap: RecordingGap | undefined;

  constructor(private readonly limit: number) {}

  /** A stored tail, as another recorder of the same console left it. */
  static parse(stored: string, limit: number): RollingTail {
    const tail = new RollingTail(limit);
    for (const line of stored.split("\n")) {
      const event = parseEvent(line);
      // A line cut short (a crash while a tail was written without its rename) is no event.
      if (!event) continue;
      const [seconds, kind, text] = event;
      const gap = kind === "m" && tail.events.length === 0 ? parseGapMarker(seconds, text) : undefined;
      if (gap) {
        tail.gap = gap;
        continue;
      }
      const bytes = Buffer.byteLength(line) + 1;
      const outputBytes = kind === "o" ? Buffer.byteLength(text) : 0;
      tail.events.push({ line: `${line}\n`, bytes, outputBytes, seconds });
      tail.eventBytes += bytes;
    }
    // The tail's share may be smaller than when it was written.
    tail.fit();
    return tail;
  }

  push(event: Event): void {
    this.events.push(event);
    this.eventBytes += event.bytes;
    this.fit();
  }

  text(): string {
    const lines = this.events.slice(this.first).map((event) => event.line);
    return (this.gap ? gapMarkerLine(this.gap) : "") + lines.join("");
  }

  private fit(): void {
    while (this.first < this.events.length && this.markerBytes() + this.eventBytes > this.limit) {
      const dropped = this.events[this.first]!;
      this.first += 1;
      this.eventBytes -= dropped.bytes;
      this.gap = {
        droppedBytes: (this.gap?.droppedBytes ?? 0) + dropped.outputBytes,
        fromSeconds: this.gap?.fromSeconds ?? dropped.seconds,
        toSeconds: dropped.seconds,
      };
    }
    if (this.first > 1024 && this.first * 2 > this.events.length) {
      this.events = this.events.slice(this.first);
      this.first = 0;
    }
  }

  private markerBytes(): number {
    return this.gap ? Buffer.byteLength(gapMarkerLine(this.gap)) : 0;
  }
}

/** Output as one event, or as several of at most `maxLineBytes` each when it is longer. */
function outputEvents(seconds: number, text: string, maxLineBytes: number): Event[] {
  const line = eventLine(seconds, "o", text);
  const bytes = Buffer.byteLength(line);
  let middle = Math.max(1, Math.floor(text.length / 2));
  // Never between the halves of a surrogate pair: neither half alone is a character.
  if (isHighSurrogate(text.charCodeAt(middle - 1))) middle += 1;
  if (bytes <= maxLineBytes || middle >= text.length) {
    return [{ line, bytes, outputBytes: Buffer.byteLength(text), seconds }];
  }
  return [
    ...outputEvents(seconds, text.slice(0, middle), maxLineBytes),
    ...outputEvents(seconds, text.slice(middle), maxLineBytes),
  ];
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function parseEvent(line: string): [number, string, string] | undefined {
  if (line.trim() === "") return undefined;
  try {
    const event: unknown = JSON.parse(line);
    if (
      Array.isArray(event) &&
      typeof event[0] === "number" &&
      typeof event[1] === "string" &&
      typeof event[2] === "string"
    ) {
      return [event[0], event[1], event[2]];
    }
  } catch {
    // Not JSON: left out below.
  }
  return undefined;
}
