// Output the screen copy has not parsed yet. Each chunk is scanned as it arrives (plain-runs.ts),
// and the heads of plain runs that would scroll away are dropped from the queue where they lie, a
// CR in their place: in a flood the queue holds the last screenful and scrollback of lines, not
// the flood, and a parse of it costs the same whenever it comes. Positions are offsets in the
// console's output stream, so readers can ask for "everything before here".
import { PlainRunFinder, type Skippable } from "./plain-runs.ts";

/** Bytes to parse, standing for [start, end) of the stream (a CR stands for a dropped stretch). */
interface Part {
  start: number;
  end: number;
  bytes: Uint8Array;
}

const carriageReturn = Buffer.from("\r");
/** Drops what scrolls away once this much came in since the last time: a few drops a megabyte. */
const dropEveryBytes = 256 * 1024;

export class OutputQueue {
  private parts: Part[] = [];
  private readonly runs: PlainRunFinder;
  private heldBytes = 0;
  private streamEnd = 0;
  private sinceDrop = 0;

  constructor(keepLines: number) {
    this.runs = new PlainRunFinder(keepLines);
  }

  /** What a parse of everything queued would take, in bytes. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** The stream position after the last byte pushed. */
  get end(): number {
    return this.streamEnd;
  }

  /** Where the queue starts: everything before it was taken. */
  get start(): number {
    return this.parts[0]?.start ?? this.streamEnd;
  }

  /**
   * Adds the next chunk. `mayDrop`: nobody waits for a position before it, so what scrolls away may
   * be dropped up to the end (a reader's exact screen depends on nothing after its position).
   */
  push(chunk: Uint8Array, mayDrop: boolean): void {
    this.runs.scan(chunk);
    this.parts.push({ start: this.streamEnd, end: this.streamEnd + chunk.length, bytes: chunk });
    this.streamEnd += chunk.length;
    this.heldBytes += chunk.length;
    this.sinceDrop += chunk.length;
    if (mayDrop && this.sinceDrop >= dropEveryBytes) this.dropScrolledAway(this.streamEnd);
  }

  /** The screen's size changed: its lines from here on are counted against the new one. */
  setKeepLines(keepLines: number): void {
    this.runs.setKeepLines(keepLines);
  }

  /** Takes the parts before `limit` (all of them by default) and where they end in the stream. */
  take(limit = Infinity): { parts: Uint8Array[]; end: number } {
    const upTo = Math.min(limit, this.streamEnd);
    this.dropScrolledAway(upTo);
    const taken: Uint8Array[] = [];
    while (this.parts[0] && this.parts[0].end <= upTo) {
      const part = this.parts.shift()!;
      taken.push(part.bytes);
      this.heldBytes -= part.bytes.length;
    }
    // A part a reader's position cuts in two: its head now, the rest later.
    const cutPart = this.parts[0];
    if (cutPart && cutPart.start < upTo) {
      const headBytes = upTo - cutPart.start;
      taken.push(cutPart.bytes.subarray(0, headBytes));
      this.parts[0] = { start: upTo, end: cutPart.end, bytes: cutPart.bytes.subarray(headBytes) };
      this.heldBytes -= headBytes;
    }
    this.runs.forgetBefore(upTo);
    return { parts: taken, end: upTo };
  }

  clear(): void {
    this.parts = [];
    this.heldBytes = 0;
  }

  /** Puts a CR in place of every stretch the finder found to skip before `upTo`. */
  private dropScrolledAway(upTo: number): void {
    this.sinceDrop = 0;
    const skippable = this.runs.takeSkippable(upTo);
    if (skippable.length === 0) return;
    const kept: Part[] = [];
    let next = 0;
    for (const part of this.parts) {
      let from = part.start;
      while (from < part.end) {
        const skip = skippable[next];
        if (!skip || skip.start >= part.end) {
          kept.push(slice(part, from, part.end));
          break;
        }
        if (skip.start > from) kept.push(slice(part, from, skip.start));
        // A stretch that began in an earlier part had its CR there.
        if (skip.start >= from) addDropped(kept, skip);
        if (skip.end > part.end) break;
        from = skip.end;
        next += 1;
      }
    }
    this.parts = kept;
    this.heldBytes = kept.reduce((sum, part) => sum + part.bytes.length, 0);
  }
}

/** A CR for the stretch, or the one just before it made longer: a flood leaves one CR, not one a drop. */
function addDropped(kept: Part[], { start, end }: Skippable): void {
  const last = kept.at(-1);
  if (last?.bytes === carriageReturn && last.end === start) kept[kept.length - 1] = { ...last, end };
  else kept.push({ start, end, bytes: carriageReturn });
}

/** [from, to) of a part that holds the stream's bytes as they came (never a CR standing in). */
function slice(part: Part, from: number, to: number): Part {
  if (from === part.start && to === part.end) return part;
  return { start: from, end: to, bytes: part.bytes.subarray(from - part.start, to - part.start) };
}
