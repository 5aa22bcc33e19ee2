// The asciicast v2 format (https://docs.asciinema.org/manual/asciicast/v2/): a JSON header line, then
// one JSON array per event, [seconds since the header's timestamp, "o" | "m", text]. Players ignore
// header keys they do not know, so the session's owner, lab and section ride in the header: the
// recording outlives the session, and lists and permissions need them after it is gone.
import { z } from "zod";
import { screenRecordingFormat } from "../../common/screen-recording.ts";

export const RecordingHeader = z.object({
  version: z.literal(2),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  /** Unix seconds when recording began. */
  timestamp: z.number(),
  title: z.string().optional(),
  /**
   * A screen recording's (screen-recording.ts): its events are pictures, not asciicast output, and
   * width and height are pixels. Absent in a console's asciicast recording.
   */
  format: z.optional(z.literal(screenRecordingFormat)),
  lab_console: z.object({
    sessionId: z.string(),
    owner: z.string(),
    labId: z.string(),
    /** The session's section (access/sections.ts); absent without one, and in older recordings. */
    section: z.optional(z.string()),
    /** A lab's terminal (1, 2, …), or -1 for the VM's screen; absent for the serial console. */
    terminal: z.optional(z.number()),
  }),
});
export type RecordingHeader = z.infer<typeof RecordingHeader>;

export function headerLine(header: RecordingHeader): string {
  return `${JSON.stringify(header)}\n`;
}

/** Output ("o") or a marker ("m", shown by players as a chapter, never as output). */
export function eventLine(seconds: number, kind: "o" | "m", text: string): string {
  return `${JSON.stringify([Number(seconds.toFixed(6)), kind, text])}\n`;
}

export function parseHeader(firstLine: string): RecordingHeader | undefined {
  try {
    const parsed = RecordingHeader.safeParse(JSON.parse(firstLine));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a recording whose head filled up lost to a flood: the output between the head and the tail
 * (recording-writer.ts) that neither kept.
 */
export interface RecordingGap {
  /** Bytes of output (UTF-8, as the VM printed them) not kept. */
  droppedBytes: number;
  /** The times of the first and the last event not kept. */
  fromSeconds: number;
  toSeconds: number;
}

/**
 * The marker that opens a tail once output was dropped, at the time of the last event dropped, so that
 * times never go back. Players show it as a chapter; docs/console.md quotes its wording, and a writer
 * that takes the recording over reads the count back from it.
 */
export function gapMarkerLine(gap: RecordingGap): string {
  const text =
    `recording gap: ${gap.droppedBytes} bytes of output (${readableSize(gap.droppedBytes)}) ` +
    `from ${gap.fromSeconds.toFixed(3)} s to ${gap.toSeconds.toFixed(3)} s not kept (size limit); ` +
    "what follows is the last output";
  return eventLine(gap.toSeconds, "m", text);
}

const gapMarkerPattern =
  /^recording gap: (\d+) bytes of output \([^)]*\) from (\d+(?:\.\d+)?) s to \d+(?:\.\d+)? s not kept \(size limit\); what follows is the last output$/;

/** The gap a marker event (its time and text) describes; undefined for any other event. */
export function parseGapMarker(seconds: number, text: string): RecordingGap | undefined {
  const match = gapMarkerPattern.exec(text);
  return match
    ? { droppedBytes: Number(match[1]), fromSeconds: Number(match[2]), toSeconds: seconds }
    : undefined;
}

function readableSize(bytes: number): string {
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
