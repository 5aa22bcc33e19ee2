// The asciicast v2 format (https://docs.asciinema.org/manual/asciicast/v2/): a JSON header line, then
// one JSON array per event, [seconds since the header's timestamp, "o" | "m", text]. Players ignore
// header keys they do not know, so the session's owner and lab ride in the header: the recording
// outlives the session, and lists and permissions need them after it is gone.
import { z } from "zod";

export const RecordingHeader = z.object({
  version: z.literal(2),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  /** Unix seconds when recording began. */
  timestamp: z.number(),
  title: z.string().optional(),
  lab_console: z.object({ sessionId: z.string(), owner: z.string(), labId: z.string() }),
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

/** The marker written last when a recording reaches its size cap. */
export const sizeCapMarker = "recording stopped: size limit reached";
