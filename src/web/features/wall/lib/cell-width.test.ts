import { Terminal } from "@xterm/headless";
import { describe, expect, it } from "vitest";
import { isWide, rowParts, screenColumns } from "./cell-width.ts";

/** The code points xterm.js's screen copy makes two cells wide, read from a headless terminal. */
async function wideInXterm(codePoints: number[]): Promise<Set<number>> {
  const terminal = new Terminal({ cols: 4, rows: codePoints.length, allowProposedApi: true });
  await new Promise<void>((done) =>
    terminal.write(codePoints.map((codePoint) => `${String.fromCodePoint(codePoint)}\r\n`).join(""), done),
  );
  const wide = new Set<number>();
  codePoints.forEach((codePoint, row) => {
    if (terminal.buffer.active.getLine(row)?.getCell(0)?.getWidth() === 2) wide.add(codePoint);
  });
  terminal.dispose();
  return wide;
}

describe("isWide", () => {
  it("agrees with xterm.js on every printable code point of the BMP and the ideographic planes' edges", async () => {
    const candidates: number[] = [];
    for (let codePoint = 0x20; codePoint <= 0xffff; codePoint += 1) {
      const surrogate = codePoint >= 0xd800 && codePoint <= 0xdfff;
      if (!surrogate && !(codePoint >= 0x7f && codePoint < 0xa0)) candidates.push(codePoint);
    }
    candidates.push(0x1f600, 0x1ffff, 0x20000, 0x2a6d6, 0x2fffd, 0x2fffe, 0x30000, 0x3fffd, 0x3fffe);
    for (let start = 0; start < candidates.length; start += 4096) {
      const chunk = candidates.slice(start, start + 4096);
      const wide = await wideInXterm(chunk);
      const disagreeing = chunk.filter((codePoint) => isWide(codePoint) !== wide.has(codePoint));
      expect(disagreeing.map((codePoint) => codePoint.toString(16))).toEqual([]);
    }
  });
});

describe("rowParts", () => {
  it("gives each wide character a part of its own and keeps narrow runs together", () => {
    expect(rowParts("ls 日本/a_b")).toEqual([
      { text: "ls ", wide: false },
      { text: "日", wide: true },
      { text: "本", wide: true },
      { text: "/a_b", wide: false },
    ]);
    expect(rowParts("")).toEqual([]);
  });
});

describe("screenColumns", () => {
  it("counts the widest row's cells, two for a wide character", () => {
    expect(screenColumns(["ls", "日本語|", "abcd"])).toBe(7);
    expect(screenColumns([])).toBe(0);
  });
});
