// Reading a screen recording (docs/vnc.md, "Screen recordings"), for the SPA's player and the BFF's
// tests: JSON lines, a header, then keyframes ("k", the whole screen), changes ("d", a rectangle) and
// markers ("m"), each a PNG in base64. What the screen showed at a time is the last keyframe before
// it, with the changes after that keyframe up to it drawn over it in order.

/** The header's `format` of a screen recording. */
export const screenRecordingFormat = "lab-console-screen/1";

export interface ScreenFrame {
  /** Seconds from the start of the recording. */
  at: number;
  keyframe: boolean;
  x: number;
  y: number;
  width: number;
  height: number;
  /** The PNG, base64. */
  png: string;
}

export interface ScreenRecording {
  /** The screen's size when recording began, in pixels; a keyframe may change it. */
  width: number;
  height: number;
  /** Whose session and which lab, from the header. */
  session?: { owner: string; labId: string };
  frames: ScreenFrame[];
  duration: number;
}

/** Markers and lines cut short are left out; a recording that is not a screen's throws. */
export function parseScreenRecording(text: string): ScreenRecording {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const header = JSON.parse(lines[0] ?? "{}") as {
    format?: unknown;
    width?: number;
    height?: number;
    lab_console?: { owner?: unknown; labId?: unknown };
  };
  if (header.format !== screenRecordingFormat) throw new Error("This is not a screen recording.");
  const { owner, labId } = header.lab_console ?? {};
  const frames: ScreenFrame[] = [];
  for (const line of lines.slice(1)) {
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      continue;
    }
    if (!Array.isArray(event) || (event[1] !== "k" && event[1] !== "d")) continue;
    const [at, kind, x, y, width, height, png] = event as [
      number,
      string,
      number,
      number,
      number,
      number,
      string,
    ];
    frames.push({ at, keyframe: kind === "k", x, y, width, height, png });
  }
  return {
    width: header.width ?? 0,
    height: header.height ?? 0,
    ...(typeof owner === "string" && typeof labId === "string" ? { session: { owner, labId } } : {}),
    frames,
    duration: frames.at(-1)?.at ?? 0,
  };
}

/**
 * The frames that draw the screen as it was `seconds` in: the last keyframe at or before it and the
 * changes after it up to `seconds`. Empty before the first keyframe (nothing was recorded yet).
 */
export function framesAt(recording: Pick<ScreenRecording, "frames">, seconds: number): ScreenFrame[] {
  const { frames } = recording;
  const end = endIndexAt(frames, seconds);
  let start = end - 1;
  while (start >= 0 && !frames[start]!.keyframe) start -= 1;
  return start < 0 ? [] : frames.slice(start, end);
}

/** How many frames are at or before `seconds` (frames are in time order). */
export function endIndexAt(frames: readonly ScreenFrame[], seconds: number): number {
  let low = 0;
  let high = frames.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (frames[middle]!.at <= seconds) low = middle + 1;
    else high = middle;
  }
  return low;
}
