// A screen recording's lines (docs/vnc.md, "Screen recordings"): JSON lines, as a console's asciicast
// is, so that one storage keeps both and lists them alike. The header is a console recording's
// (asciicast.ts) with `format: "lab-console-screen/1"`, width and height in pixels and
// `lab_console.terminal` -1; then one JSON array per event:
//
//   [seconds, "k", 0, 0, width, height, base64 PNG]   a keyframe: the whole screen
//   [seconds, "d", x, y, width, height, base64 PNG]   a change: that rectangle of the screen
//   [seconds, "m", text]                              a marker (the size cap's gap), drawn by nobody
//
// A change applies to the screen as the keyframe before it and the changes since left it; a player
// seeking to a time draws the last keyframe before it and the changes after that keyframe up to it.
import type { Area } from "../../common/png.ts";
import type { RecordingGap } from "./asciicast.ts";

export type ScreenEventKind = "k" | "d";

export interface ScreenEventLine {
  line: string;
  /** The line's length in bytes, its newline included. */
  bytes: number;
  seconds: number;
  keyframe: boolean;
}

export function screenEventLine(
  seconds: number,
  kind: ScreenEventKind,
  area: Area,
  png: Buffer,
): ScreenEventLine {
  const line = `${JSON.stringify([
    Number(seconds.toFixed(3)),
    kind,
    area.x,
    area.y,
    area.width,
    area.height,
    png.toString("base64"),
  ])}\n`;
  // Base64 and JSON's punctuation are ASCII: a character is a byte.
  return { line, bytes: line.length, seconds, keyframe: kind === "k" };
}

/**
 * The marker that opens a tail once the size cap let screen changes go, at the time of the last one
 * let go, so that times never go back (the console's gap marker, asciicast.ts, for pictures).
 */
export function screenGapMarkerLine(gap: RecordingGap): string {
  const text =
    `recording gap: ${gap.droppedBytes} bytes of screen changes (${readableSize(gap.droppedBytes)}) ` +
    `from ${gap.fromSeconds.toFixed(3)} s to ${gap.toSeconds.toFixed(3)} s not kept (size limit); ` +
    "what follows is the last of the screen";
  return `${JSON.stringify([Number(gap.toSeconds.toFixed(3)), "m", text])}\n`;
}

const gapMarkerPattern =
  /^recording gap: (\d+) bytes of screen changes \([^)]*\) from (\d+(?:\.\d+)?) s to \d+(?:\.\d+)? s not kept/;

/** One stored line read back: an event, the gap marker, or undefined for anything else (a cut line). */
export function parseScreenLine(
  line: string,
): { event: ScreenEventLine } | { gap: RecordingGap } | undefined {
  if (line.trim() === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || typeof parsed[0] !== "number") return undefined;
  const seconds = parsed[0];
  if (parsed[1] === "m" && typeof parsed[2] === "string") {
    const match = gapMarkerPattern.exec(parsed[2]);
    return match
      ? { gap: { droppedBytes: Number(match[1]), fromSeconds: Number(match[2]), toSeconds: seconds } }
      : undefined;
  }
  if ((parsed[1] === "k" || parsed[1] === "d") && typeof parsed[6] === "string") {
    const text = `${line.trimEnd()}\n`;
    return { event: { line: text, bytes: text.length, seconds, keyframe: parsed[1] === "k" } };
  }
  return undefined;
}

function readableSize(bytes: number): string {
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
