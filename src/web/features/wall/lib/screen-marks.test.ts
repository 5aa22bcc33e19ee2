import { describe, expect, it } from "vitest";
import { hitsByRow, rowRuns } from "./screen-marks.ts";

const narrow = (text: string) => ({ text, wide: false });
const wide = (text: string) => ({ text, wide: true });

describe("rowRuns", () => {
  it("is the row's parts unmarked without hits", () => {
    expect(rowRuns("ls 日本")).toEqual([{ marked: false, parts: [narrow("ls "), wide("日"), wide("本")] }]);
    expect(rowRuns("")).toEqual([]);
  });

  it("marks each hit, before, between and after the rest", () => {
    const row = "cat: x: Permission denied; Permission denied";
    expect(
      rowRuns(row, [
        { start: 8, end: 25 },
        { start: 27, end: 44 },
      ]),
    ).toEqual([
      { marked: false, parts: [narrow("cat: x: ")] },
      { marked: true, parts: [narrow("Permission denied")] },
      { marked: false, parts: [narrow("; ")] },
      { marked: true, parts: [narrow("Permission denied")] },
    ]);
    expect(rowRuns("denied", [{ start: 0, end: 6 }])).toEqual([{ marked: true, parts: [narrow("denied")] }]);
  });

  it("keeps every wide character a part of its own inside and outside a mark", () => {
    // 権限がありません: "permission denied" in Japanese, all wide.
    expect(rowRuns("rm: 権限がありません!", [{ start: 4, end: 6 }])).toEqual([
      { marked: false, parts: [narrow("rm: ")] },
      { marked: true, parts: [wide("権"), wide("限")] },
      {
        marked: false,
        parts: [wide("が"), wide("あ"), wide("り"), wide("ま"), wide("せ"), wide("ん"), narrow("!")],
      },
    ]);
  });

  it("marks a character whole when a hit splits it, and joins overlapping hits", () => {
    // 𠀋 is one wide character but two UTF-16 units.
    expect(rowRuns("a𠀋b", [{ start: 2, end: 3 }])).toEqual([
      { marked: false, parts: [narrow("a")] },
      { marked: true, parts: [wide("𠀋")] },
      { marked: false, parts: [narrow("b")] },
    ]);
    expect(
      rowRuns("abcdef", [
        { start: 1, end: 3 },
        { start: 2, end: 5 },
      ]),
    ).toEqual([
      { marked: false, parts: [narrow("a")] },
      { marked: true, parts: [narrow("bcde")] },
      { marked: false, parts: [narrow("f")] },
    ]);
  });

  it("ignores what lies past the row's end", () => {
    expect(rowRuns("ab", [{ start: 1, end: 9 }])).toEqual([
      { marked: false, parts: [narrow("a")] },
      { marked: true, parts: [narrow("b")] },
    ]);
    expect(rowRuns("ab", [{ start: 5, end: 9 }])).toEqual([{ marked: false, parts: [narrow("ab")] }]);
  });
});

describe("hitsByRow", () => {
  it("groups hits by row, each row's in order", () => {
    const rows = hitsByRow([
      { row: 2, start: 9, end: 10 },
      { row: 0, start: 1, end: 2 },
      { row: 2, start: 3, end: 4 },
    ]);
    expect([...rows.keys()].sort()).toEqual([0, 2]);
    expect(rows.get(2)).toEqual([
      { row: 2, start: 3, end: 4 },
      { row: 2, start: 9, end: 10 },
    ]);
  });
});
