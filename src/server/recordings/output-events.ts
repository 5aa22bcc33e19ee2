// A console's output as its recording holds it until it is stored: the raw bytes and when they arrived
// (frames). They become asciicast event lines only when they are written (recording-writer.ts), so
// that relaying a chunk costs the recording no more than keeping it.
import { eventLine } from "./asciicast.ts";

/** Output as the VM printed it, and when it arrived: seconds since the recording's start. */
export interface OutputFrame {
  bytes: Buffer;
  seconds: number;
}

export interface OutputEvent {
  line: string;
  /** The line's length in bytes. */
  bytes: number;
  /** The output it holds. */
  text: string;
  seconds: number;
}

/**
 * Turns frames into event lines, in order, over as many calls as it takes. Frames of the same time
 * make one event (fewer, larger events), and a character split across frames stays whole: its first
 * bytes wait for the frame that finishes it.
 */
export class OutputEventConverter {
  private unfinished: OutputFrame | undefined;
  /**
   * Frames of one time are joined up to 16 KiB: output in many small chunks makes fewer events, and
   * its strings stay small (V8 makes strings past 128 KiB at a much higher cost per byte). And up to
   * half the longest line, so that an event seldom needs splitting: each split is JSON once more.
   */
  private readonly maxJoinedBytes: number;

  /** Longer output is split over several events of at most `maxLineBytes` each. */
  constructor(private readonly maxLineBytes: number) {
    this.maxJoinedBytes = Math.min(16 * 1024, Math.floor(maxLineBytes / 2));
  }

  convert(frames: readonly OutputFrame[]): OutputEvent[] {
    const events: OutputEvent[] = [];
    let start = 0;
    while (start < frames.length) {
      const { seconds } = frames[start]!;
      let end = start + 1;
      let joinedBytes = frames[start]!.bytes.length;
      while (
        end < frames.length &&
        frames[end]!.seconds === seconds &&
        joinedBytes + frames[end]!.bytes.length <= this.maxJoinedBytes
      ) {
        joinedBytes += frames[end]!.bytes.length;
        end += 1;
      }
      const parts = frames.slice(start, end).map((frame) => frame.bytes);
      if (this.unfinished) parts.unshift(this.unfinished.bytes);
      const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      const whole = wholeCharactersLength(bytes);
      // A copy: a view would keep the whole of `bytes` alive for its last few.
      this.unfinished =
        whole < bytes.length ? { bytes: Buffer.from(bytes.subarray(whole)), seconds } : undefined;
      if (whole > 0)
        events.push(...outputEvents(seconds, bytes.toString("utf8", 0, whole), this.maxLineBytes));
      start = end;
    }
    return events;
  }

  /** The first bytes of a character that the frames converted so far began and did not finish. */
  takeUnfinished(): OutputFrame | undefined {
    const { unfinished } = this;
    this.unfinished = undefined;
    return unfinished;
  }
}

/** The length in bytes of the character that a lead byte (0xc0 and up) begins. */
function characterLength(leadByte: number): number {
  return leadByte >= 0xf0 ? 4 : leadByte >= 0xe0 ? 3 : 2;
}

function isContinuationByte(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** `bytes` up to the character it ends in the middle of, if it does. */
function wholeCharactersLength(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back]!;
    if (isContinuationByte(byte)) continue;
    if (byte < 0x80) return bytes.length;
    return back < characterLength(byte) ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** How many bytes at the start of `bytes` finish a character that began before them. */
export function continuationLength(bytes: Buffer): number {
  let length = 0;
  while (length < 3 && length < bytes.length && isContinuationByte(bytes[length]!)) length += 1;
  return length;
}

/** Output as one event, or as several of at most `maxLineBytes` each when it is longer. */
function outputEvents(seconds: number, text: string, maxLineBytes: number): OutputEvent[] {
  const line = eventLine(seconds, "o", text);
  const bytes = Buffer.byteLength(line);
  let middle = Math.max(1, Math.floor(text.length / 2));
  // Never between the halves of a surrogate pair: neither half alone is a character.
  if (isHighSurrogate(text.charCodeAt(middle - 1))) middle += 1;
  if (bytes <= maxLineBytes || middle >= text.length) return [{ line, bytes, text, seconds }];
  return [
    ...outputEvents(seconds, text.slice(0, middle), maxLineBytes),
    ...outputEvents(seconds, text.slice(middle), maxLineBytes),
  ];
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
