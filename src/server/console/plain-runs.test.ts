import { describe, expect, it } from "vitest";
import { PlainRunFinder } from "./plain-runs.ts";

const lines = (count: number, from = 0) =>
  Array.from({ length: count }, (_, index) => `line ${from + index}\r\n`).join("");

/** What the finder would drop from the chunks, as one stream, once all of them were scanned. */
function skipped(chunks: (string | Buffer)[], keepLines: number): string[] {
  const finder = new PlainRunFinder(keepLines);
  const buffers = chunks.map((chunk) => (typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk));
  const stream = Buffer.concat(buffers);
  let offset = 0;
  for (const bytes of buffers) {
    finder.scan(bytes);
    offset += bytes.length;
  }
  return finder.takeSkippable(offset).map(({ start, end }) => stream.subarray(start, end).toString("utf8"));
}

describe("PlainRunFinder", () => {
  it("skips the head of a long plain run, keeping its last lines", () => {
    expect(skipped([lines(10)], 3)).toEqual([lines(7)]);
    expect(skipped([lines(3)], 3)).toEqual([]);
  });

  it("never skips escape sequences, and treats each side of one as its own run", () => {
    const text = `${lines(5)}\x1b[31m${lines(5, 5)}`;
    expect(skipped([text], 2)).toEqual([lines(3), lines(3, 5)]);
  });

  it("does not mistake the text of an OSC or DCS string for plain text", () => {
    expect(skipped([`\x1b]0;${lines(10)}\x07`], 2)).toEqual([]);
    expect(skipped([`\x1bP${lines(10)}\x1b\\`], 2)).toEqual([]);
    expect(skipped([`\x1b]0;title\x1b\\${lines(4)}`], 2)).toEqual([lines(2)]);
  });

  it("follows a sequence split across chunks", () => {
    expect(skipped(["\x1b]0;", lines(10), "\x07"], 2)).toEqual([]);
    expect(skipped(["\x1b[", `1m${lines(4)}`], 2)).toEqual([lines(2)]);
  });

  it("knows C1 controls in UTF-8 from other characters", () => {
    // U+009D is OSC: the lines after it are its string.
    expect(skipped([`\u009d0;${lines(10)}`], 2)).toEqual([]);
    expect(skipped([`°é日本${lines(4)}`], 2)).toEqual([`°é日本${lines(2)}`]);
    // 0xC2 ending a chunk: a C1 control if the next chunk begins with 0x80..0x9F (here OSC).
    const withC2 = Buffer.concat([Buffer.from(lines(4)), Buffer.from([0xc2])]);
    expect(skipped([withC2, Buffer.concat([Buffer.from([0x9d]), Buffer.from(`0;${lines(10)}`)])], 2)).toEqual(
      [lines(2)],
    );
    expect(skipped([withC2, Buffer.concat([Buffer.from([0xa0]), Buffer.from(lines(4, 4))])], 2)).toEqual([
      lines(2),
      lines(2, 4),
    ]);
  });

  it("leaves charset shifts to the parser", () => {
    expect(skipped([`${lines(3)}\x0e${lines(3, 3)}`], 2)).toEqual([lines(1), lines(1, 3)]);
    expect(skipped([`${lines(3)}\x0f${lines(3, 3)}`], 2)).toEqual([lines(1), lines(1, 3)]);
  });

  it("lets a head carry the controls that only move the cursor or ring, and those xterm.js ignores", () => {
    const noisy = `bell\x07 vt\x0b ff\x0c nul\x00 del\x7f can\x18 sub\x1a\r\n`;
    expect(skipped([`${noisy}${lines(2)}`], 2)).toEqual([noisy]);
  });

  it("finds a run across chunks", () => {
    expect(skipped([lines(2), lines(3, 2), `${lines(5, 5)}\x1b[1m`], 2)).toEqual([lines(8)]);
  });

  it("offers the open run's head once, and the run goes on from there", () => {
    const finder = new PlainRunFinder(2);
    const first = Buffer.from(lines(5), "utf8");
    finder.scan(first);
    expect(finder.takeSkippable(first.length)).toEqual([{ start: 0, end: Buffer.byteLength(lines(3)) }]);
    expect(finder.takeSkippable(first.length)).toEqual([]);
    finder.scan(Buffer.from(lines(2, 5), "utf8"));
    const end = first.length + Buffer.byteLength(lines(2, 5));
    expect(finder.takeSkippable(end)).toEqual([
      { start: Buffer.byteLength(lines(3)), end: Buffer.byteLength(lines(5)) },
    ]);
  });

  it("offers nothing that depends on output after the position asked about", () => {
    const finder = new PlainRunFinder(2);
    const first = Buffer.from(lines(2), "utf8");
    finder.scan(first);
    finder.scan(Buffer.from(lines(5, 2), "utf8"));
    // Up to the end of `first`, no run had more than 2 lines.
    expect(finder.takeSkippable(first.length)).toEqual([]);
    finder.forgetBefore(first.length);
    const end = first.length + Buffer.byteLength(lines(5, 2));
    expect(finder.takeSkippable(end)).toEqual([
      { start: first.length, end: first.length + Buffer.byteLength(lines(3, 2)) },
    ]);
  });
});
