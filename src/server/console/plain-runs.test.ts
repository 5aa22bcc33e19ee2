import { describe, expect, it } from "vitest";
import { PlainRunFinder } from "./plain-runs.ts";

const lines = (count: number, from = 0) =>
  Array.from({ length: count }, (_, index) => `line ${from + index}\r\n`).join("");

/** What the finder would drop from the chunks, as one stream, once all of them were scanned. */
function skipped(chunks: string[], keepLines: number): string[] {
  const finder = new PlainRunFinder(keepLines);
  const stream = Buffer.concat(chunks.map((chunk) => Buffer.from(chunk, "utf8")));
  let offset = 0;
  for (const chunk of chunks) {
    const bytes = Buffer.from(chunk, "utf8");
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
  });

  it("leaves charset shifts and other controls to the parser", () => {
    expect(skipped([`${lines(3)}\x0e${lines(3, 3)}`], 2)).toEqual([lines(1), lines(1, 3)]);
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
