import { describe, expect, it } from "vitest";
import { PlainRunFinder } from "./plain-runs.ts";

const lines = (count: number, from = 0) =>
  Array.from({ length: count }, (_, index) => `line ${from + index}\r\n`).join("");

function skipped(chunks: string[], keepLines: number): string[] {
  const finder = new PlainRunFinder();
  return chunks.flatMap((chunk) => {
    const bytes = Buffer.from(chunk, "utf8");
    return finder
      .scan([bytes], keepLines)
      .map(({ start, end }) => bytes.subarray(start, end).toString("utf8"));
  });
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

  it("finds a run across the chunks of one scan, by offsets into them joined", () => {
    const chunks = [lines(2), lines(3, 2), `${lines(5, 5)}\x1b[1m`].map((text) => Buffer.from(text, "utf8"));
    const joined = Buffer.concat(chunks);
    const found = new PlainRunFinder().scan(chunks, 2);
    expect(found.map(({ start, end }) => joined.subarray(start, end).toString("utf8"))).toEqual([lines(8)]);
  });
});
