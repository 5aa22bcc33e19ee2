// Reading a downloaded .cast the way a player and a member of staff would: its events, its output, and
// the gap a flood left in it. Shared by the recording tests over every storage and over the API.
import { expect } from "vitest";

export type CastEvent = [number, string, string];

/** The events of a .cast, after its header line; a line that is not JSON fails the test. */
export function eventsOf(cast: string): CastEvent[] {
  return cast
    .trimEnd()
    .split("\n")
    .slice(1)
    .map((line) => JSON.parse(line) as CastEvent);
}

/** The output events of a .cast, joined as a player would show them. */
export function outputOf(cast: string): string {
  return eventsOf(cast)
    .filter(([, kind]) => kind === "o")
    .map(([, , output]) => output)
    .join("");
}

/** The marker a flood leaves, as docs/console.md words it: the exact count of bytes not kept. */
const gapMarker =
  /^recording gap: (\d+) bytes of output .* not kept \(size limit\); what follows is the last output$/;

export interface CastGap {
  /** Output bytes left out, as the marker says. */
  dropped: number;
  /** The output before the marker (the head) and after it (the tail). */
  before: string;
  after: string;
  /** The marker line and everything after it, as stored: the tail. */
  tail: string;
}

/** The recording's gap, or undefined when it has none. */
export function gapOf(cast: string): CastGap | undefined {
  const lines = cast.trimEnd().split("\n").slice(1);
  const at = lines.findIndex((line) => {
    const [, kind, text] = JSON.parse(line) as CastEvent;
    return kind === "m" && gapMarker.test(text);
  });
  if (at < 0) return undefined;
  const output = (part: string[]) =>
    part
      .map((line) => JSON.parse(line) as CastEvent)
      .filter(([, kind]) => kind === "o")
      .map(([, , text]) => text)
      .join("");
  const [, , text] = JSON.parse(lines[at]!) as CastEvent;
  return {
    dropped: Number(gapMarker.exec(text)![1]),
    before: output(lines.slice(0, at)),
    after: output(lines.slice(at + 1)),
    tail: `${lines.slice(at).join("\n")}\n`,
  };
}

/**
 * What a player relies on, and what the cap promises: one header, whole JSON lines, times that never
 * go back, at most one gap marker, and no more than `maxBytes` in all.
 */
export function expectWellFormed(cast: string, maxBytes: number): void {
  expect(Buffer.byteLength(cast)).toBeLessThanOrEqual(maxBytes);
  expect(cast.endsWith("\n")).toBe(true);
  expect(cast.split("\n").filter((line) => line.startsWith("{"))).toHaveLength(1);
  const events = eventsOf(cast);
  for (const [time, kind, text] of events) {
    expect(typeof time).toBe("number");
    expect(["o", "m"]).toContain(kind);
    expect(typeof text).toBe("string");
  }
  const times = events.map(([time]) => time);
  expect(times).toEqual([...times].sort((a, b) => a - b));
  expect(
    events.filter(([, kind, text]) => kind === "m" && text.startsWith("recording gap")).length,
  ).toBeLessThanOrEqual(1);
}

/**
 * What staff can trust about a flooded recording: it begins with what was printed first and ends with
 * what was printed last, and the marker counts exactly what is missing between the two.
 */
export function expectGapAccountsFor(cast: string, printed: string): CastGap {
  const gap = gapOf(cast);
  expect(gap, "the recording marks a gap").toBeDefined();
  expect(printed.startsWith(gap!.before)).toBe(true);
  expect(printed.endsWith(gap!.after)).toBe(true);
  expect(gap!.dropped).toBeGreaterThan(0);
  expect(Buffer.byteLength(gap!.before) + gap!.dropped + Buffer.byteLength(gap!.after)).toBe(
    Buffer.byteLength(printed),
  );
  return gap!;
}

/** A flood's worth of distinct lines, `bytes` long or a little more. */
export function floodText(bytes: number, label = "flood"): string {
  const lines: string[] = [];
  let length = 0;
  for (let index = 0; length < bytes; index += 1) {
    const line = `${label} ${index} ${"y".repeat(100)}\r\n`;
    lines.push(line);
    length += line.length;
  }
  return lines.join("");
}
