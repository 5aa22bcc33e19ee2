// The tail of a recording whose head is full (recording-writer.ts): the newest output that fits in the
// tail's share together with the gap marker, which counts what was let go of. Output arrives raw and
// becomes event lines when the tail is written; the lines are kept for later writes, which make lines
// only of what came since. What does not fit in the share once made into lines is counted into the
// marker.
import { gapMarkerLine, parseGapMarker, type RecordingGap } from "./asciicast.ts";
import { continuationLength, OutputEventConverter, type OutputFrame } from "./output-events.ts";

/** Output made into an event line at an earlier write: kept as its line, not made again. */
interface HeldEvent {
  line: string;
  /** The line's length in bytes. */
  bytes: number;
  /** The output it holds, in bytes as the VM printed them. */
  outputBytes: number;
  seconds: number;
}

export class RollingTail {
  /**
   * Output the writes before made into event lines, oldest first. A tail is written once a second
   * while output flows: making a megabyte's lines again each time would block the event loop for
   * milliseconds a second, for a console where someone only types.
   */
  private events: HeldEvent[] = [];
  /** Events before this index were let go of; the array is compacted now and then. */
  private firstEvent = 0;
  /** The bytes of the event lines held. */
  private eventBytes = 0;
  /** Output since the last write, raw, newer than every event. */
  private frames: OutputFrame[] = [];
  /** Frames before this index were let go of; the array is compacted now and then. */
  private first = 0;
  /** The bytes of the frames held: with the event lines', at most `limit`. */
  private heldBytes = 0;
  /** Carries a character cut across two writes' output into the later one. */
  private readonly converter: OutputEventConverter;
  /** What was let go of before the output held. */
  private gap: RecordingGap | undefined;
  /** Set by the first write: older output can no longer go before what it wrote. */
  private written = false;

  /** `maxLineBytes` as the head's events have it (output-events.ts). */
  constructor(
    private readonly limit: number,
    maxLineBytes: number,
  ) {
    this.converter = new OutputEventConverter(maxLineBytes);
  }

  /** A stored tail, as another writer of the same console left it: its output comes first. */
  static parse(stored: string, limit: number, maxLineBytes: number): RollingTail {
    const tail = new RollingTail(limit, maxLineBytes);
    for (const line of stored.split("\n")) {
      const event = parseEvent(line);
      // A line cut short (a crash while a tail was written without its rename) is no event.
      if (!event) continue;
      const [seconds, kind, text] = event;
      const gap = kind === "m" && tail.frames.length === 0 ? parseGapMarker(seconds, text) : undefined;
      if (gap) {
        tail.gap = gap;
      } else if (kind === "o") {
        // Its output as the VM printed it: event lines hold whole characters of UTF-8.
        const bytes = Buffer.from(text);
        tail.frames.push({ bytes, seconds });
        tail.heldBytes += bytes.length;
      }
    }
    // The tail's share may be smaller than when it was written.
    tail.fit();
    return tail;
  }

  push(frame: OutputFrame): void {
    this.frames.push(frame);
    this.heldBytes += frame.bytes.length;
    this.fit();
  }

  /**
   * Output older than any pushed so far: what the head could not take, handed over once it filled,
   * before the tail's first write.
   */
  pushOlder(frames: readonly OutputFrame[]): void {
    if (frames.length === 0) return;
    // Its lines would come after newer ones, and a character cut at the write would not join up.
    if (this.written) throw new Error("a recording's tail takes older output only before its first write");
    if (this.gap) {
      // The output held fills the share already: output from before what was let go of goes too.
      const bytes = frames.reduce((sum, frame) => sum + frame.bytes.length, 0);
      this.gap = {
        ...this.gap,
        droppedBytes: this.gap.droppedBytes + bytes,
        fromSeconds: frames[0]!.seconds,
      };
      return;
    }
    this.frames = [...frames, ...this.frames.slice(this.first)];
    this.first = 0;
    for (const frame of frames) this.heldBytes += frame.bytes.length;
    this.fit();
  }

  /** The tail as stored: the gap marker, if anything was let go of, then the newest event lines that fit. */
  text(): string {
    this.written = true;
    for (const event of this.converter.convert(this.frames.slice(this.first))) {
      const outputBytes = Buffer.byteLength(event.text);
      this.events.push({ line: event.line, bytes: event.bytes, outputBytes, seconds: event.seconds });
      this.eventBytes += event.bytes;
    }
    this.frames = [];
    this.first = 0;
    this.heldBytes = 0;
    // Lines are longer than the output they hold: what fitted raw may not fit as lines.
    while (this.eventBytes > this.limit) this.letGoOfOldestEvent();
    // The marker is sized only for the last few: the events before do not fit even without it.
    while (
      this.firstEvent < this.events.length &&
      this.gap &&
      Buffer.byteLength(gapMarkerLine(this.gap)) + this.eventBytes > this.limit
    ) {
      this.letGoOfOldestEvent();
    }
    const lines = this.events.slice(this.firstEvent).map((event) => event.line);
    return (this.gap ? gapMarkerLine(this.gap) : "") + lines.join("");
  }

  /**
   * Lets go of the oldest output, down to the share: whole events, then whole frames and the
   * beginning of the last.
   */
  private fit(): void {
    // Line bytes and raw bytes summed: the raw output's lines will be no shorter, so whatever this
    // lets go of would not fit at the write either.
    while (this.eventBytes + this.heldBytes > this.limit && this.firstEvent < this.events.length) {
      this.letGoOfOldestEvent();
    }
    if (this.heldBytes <= this.limit) return;
    // The first bytes of a character the last write's output ended with wait for the rest of it,
    // which is about to go: they go first.
    const unfinished = this.converter.takeUnfinished();
    if (unfinished) this.gap = countedIn(this.gap, unfinished.bytes.length, unfinished.seconds);
    while (this.heldBytes > this.limit) {
      this.letGoOfOldest(Math.min(this.heldBytes - this.limit, this.frames[this.first]!.bytes.length));
    }
    // A character cut in two goes with its beginning: what is held begins with a whole one, and the
    // count of what was let go of stays exact.
    for (let cut = 3; cut > 0 && this.first < this.frames.length;) {
      const rest = Math.min(cut, continuationLength(this.frames[this.first]!.bytes));
      if (rest === 0) break;
      this.letGoOfOldest(rest);
      cut -= rest;
    }
    if (this.first > 1024 && this.first * 2 > this.frames.length) {
      this.frames = this.frames.slice(this.first);
      this.first = 0;
    }
  }

  private letGoOfOldestEvent(): void {
    const oldest = this.events[this.firstEvent]!;
    this.firstEvent += 1;
    this.eventBytes -= oldest.bytes;
    this.gap = countedIn(this.gap, oldest.outputBytes, oldest.seconds);
    if (this.firstEvent > 1024 && this.firstEvent * 2 > this.events.length) {
      this.events = this.events.slice(this.firstEvent);
      this.firstEvent = 0;
    }
  }

  /** Lets go of the oldest frame's first `bytes`: all of it, or its beginning. */
  private letGoOfOldest(bytes: number): void {
    const oldest = this.frames[this.first]!;
    if (bytes === oldest.bytes.length) this.first += 1;
    else this.frames[this.first] = { bytes: oldest.bytes.subarray(bytes), seconds: oldest.seconds };
    this.heldBytes -= bytes;
    this.gap = countedIn(this.gap, bytes, oldest.seconds);
  }
}

/** The gap once output of `bytes`, at `seconds`, was let go of after what it counts. */
function countedIn(gap: RecordingGap | undefined, bytes: number, seconds: number): RecordingGap {
  return {
    droppedBytes: (gap?.droppedBytes ?? 0) + bytes,
    fromSeconds: gap?.fromSeconds ?? seconds,
    toSeconds: seconds,
  };
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
