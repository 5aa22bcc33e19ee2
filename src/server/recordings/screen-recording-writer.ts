// Writes one VM screen's recording (screen-recording.ts) under the size cap, as recording-writer.ts
// writes a console's: a head appended to while it has room (the cap less the tail's share), then a
// tail replaced whole at most once per interval, holding the newest events that fit, opened by a
// marker counting what it let go of. What differs is that a change means nothing without the
// keyframe before it: the tail keeps whole groups (a keyframe and the changes after it) and always
// begins with a keyframe, and this writer says when the next event must be one (needsKeyframe):
// first, after the head filled, and once the changes since the last keyframe grew past a share of
// the tail or an interval, so that a player seeking anywhere draws little.
import { headerLine, type RecordingGap, type RecordingHeader } from "./asciicast.ts";
import type { RecordingBatch } from "./recording-storage.ts";
import {
  parseScreenLine,
  screenGapMarkerLine,
  screenEventLine,
  type ScreenEventKind,
  type ScreenEventLine,
} from "./screen-recording.ts";
import type { Area } from "../../common/png.ts";

export interface ScreenRecordingWriterOptions {
  append(batch: RecordingBatch): Promise<void>;
  replaceTail(batch: RecordingBatch): Promise<void>;
  header: RecordingHeader;
  /** Bytes already in the head, header line included (0 for a new recording). */
  headBytes: number;
  /** The stored tail's lines when the recording has a tail; else undefined. */
  tail: string | undefined;
  maxBytes: number;
  tailBytes: number;
  tailWriteIntervalMs: number;
  /** A keyframe once the changes since the last one reach this many bytes (at most a quarter of the tail). */
  keyframeEveryBytes: number;
  /** A keyframe at the first change this long after the last keyframe. */
  keyframeEveryMs: number;
  onError(error: unknown): void;
}

export class ScreenRecordingWriter {
  private readonly startedAtMs: number;
  private readonly headLimit: number;
  private readonly keyframeEveryBytes: number;
  private headBytes: number;
  private pendingHead: string[] = [];
  private tail: ScreenTail | undefined;
  /** Whether the last keyframe written is still there for a change to apply to. */
  private hasKeyframe = false;
  private lastKeyframeMs = -Infinity;
  private changeBytes = 0;
  private tailDue = false;
  private tailTimer: NodeJS.Timeout | undefined;
  private lastTailWriteMs = -Infinity;
  private flushing: Promise<void> | undefined;

  constructor(private readonly options: ScreenRecordingWriterOptions) {
    const { header, headBytes, tail, maxBytes, tailBytes } = options;
    this.headBytes = headBytes > 0 ? headBytes : Buffer.byteLength(headerLine(header));
    this.headLimit = maxBytes - tailBytes;
    this.keyframeEveryBytes = Math.min(options.keyframeEveryBytes, Math.floor(tailBytes / 4));
    this.startedAtMs = header.timestamp * 1000;
    if (tail !== undefined) this.tail = ScreenTail.parse(tail, tailBytes);
  }

  /** Whether the next event at `atMs` must be a keyframe: a change would have nothing to apply to, or seeking would draw too much. */
  needsKeyframe(atMs: number = Date.now()): boolean {
    return (
      !this.hasKeyframe ||
      this.changeBytes >= this.keyframeEveryBytes ||
      atMs - this.lastKeyframeMs >= this.options.keyframeEveryMs
    );
  }

  /**
   * Takes a keyframe ("k", the whole screen) or a change ("d"). False for a change the recording
   * cannot take (it needs a keyframe first: needsKeyframe says so from then on); a keyframe is always
   * taken, though one larger than the tail's share is counted as let go of at once.
   */
  push(kind: ScreenEventKind, area: Area, png: Buffer, atMs: number = Date.now()): boolean {
    const keyframe = kind === "k";
    if (!keyframe && !this.hasKeyframe) return false;
    const event = screenEventLine(Math.max(0, atMs - this.startedAtMs) / 1000, kind, area, png);
    if (!this.tail && this.headBytes + event.bytes <= this.headLimit) {
      this.headBytes += event.bytes;
      this.pendingHead.push(event.line);
      this.counted(event, atMs);
      this.flushing ??= this.drain();
      return true;
    }
    if (!this.tail) {
      // The head is full: what follows rolls through the tail, which must open with a keyframe.
      this.tail = new ScreenTail(this.options.tailBytes);
      if (!keyframe) {
        this.hasKeyframe = false;
        return false;
      }
    }
    this.hasKeyframe = this.tail.push(event);
    this.counted(event, atMs);
    this.scheduleTailWrite();
    return true;
  }

  /** Resolves once everything taken so far is stored (or dropped): the tail is written now. */
  async flushed(): Promise<void> {
    if (this.tailTimer) {
      clearTimeout(this.tailTimer);
      this.tailTimer = undefined;
      this.tailDue = true;
      this.flushing ??= this.drain();
    }
    while (this.flushing) await this.flushing;
  }

  private counted(event: ScreenEventLine, atMs: number): void {
    if (event.keyframe) {
      this.lastKeyframeMs = atMs;
      this.changeBytes = 0;
      // A keyframe goes into the head whole; in the tail, push said whether it is kept.
      if (!this.tail) this.hasKeyframe = true;
    } else {
      this.changeBytes += event.bytes;
    }
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

  /** One write at a time, the head's batches first (as recording-writer.ts). */
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

/** The newest whole groups (a keyframe, then its changes) that fit in `limit` bytes with the gap marker. */
class ScreenTail {
  private groups: ScreenEventLine[][] = [];
  private bytes = 0;
  private gap: RecordingGap | undefined;

  constructor(private readonly limit: number) {}

  static parse(stored: string, limit: number): ScreenTail {
    const tail = new ScreenTail(limit);
    for (const line of stored.split("\n")) {
      const parsed = parseScreenLine(line);
      if (!parsed) continue;
      if ("gap" in parsed) {
        if (tail.groups.length === 0) tail.gap = parsed.gap;
        continue;
      }
      tail.push(parsed.event);
    }
    return tail;
  }

  /** Whether the event's group is still kept (false: it was let go of, the event with it). */
  push(event: ScreenEventLine): boolean {
    const group = event.keyframe ? undefined : this.groups.at(-1);
    if (group) group.push(event);
    else if (event.keyframe) this.groups.push([event]);
    else {
      this.letGo([event]);
      return false;
    }
    this.bytes += event.bytes;
    while (this.groups.length > 0 && this.markerBytes() + this.bytes > this.limit) {
      const dropped = this.groups.shift()!;
      for (const gone of dropped) this.bytes -= gone.bytes;
      this.letGo(dropped);
    }
    return this.groups.at(-1)?.at(-1) === event;
  }

  text(): string {
    const lines = this.groups.flatMap((group) => group.map((event) => event.line));
    return (this.gap ? screenGapMarkerLine(this.gap) : "") + lines.join("");
  }

  private letGo(events: readonly ScreenEventLine[]): void {
    const bytes = events.reduce((sum, event) => sum + event.bytes, 0);
    this.gap = {
      droppedBytes: (this.gap?.droppedBytes ?? 0) + bytes,
      fromSeconds: this.gap?.fromSeconds ?? events[0]!.seconds,
      toSeconds: events.at(-1)!.seconds,
    };
  }

  private markerBytes(): number {
    return this.gap ? Buffer.byteLength(screenGapMarkerLine(this.gap)) : 0;
  }
}
