// The wall's matcher: plain text and regular expressions, case, positions in UTF-16, the cap on
// hits, and the linear-time engine's bound on what a pattern may cost.
import { describe, expect, it } from "vitest";
import type { WallSearch } from "../../common/wall-protocol.ts";
import { foldCase, foldPattern } from "./case-fold.ts";
import { BadPattern, compileSearch, maxHits, type RowMatcher } from "./wall-search.ts";

function matcher(query: string, options: Partial<WallSearch> = {}): RowMatcher {
  const compiled = compileSearch({ query, regex: false, matchCase: false, ...options });
  if (!compiled) throw new Error("no matcher for an empty query");
  return compiled;
}

/** The matched text of each hit. */
function found(row: string, query: string, options: Partial<WallSearch> = {}): string[] {
  return matcher(query, options)
    .hitsIn(row)
    .map(({ start, end }) => row.slice(start, end));
}

describe("plain text search", () => {
  it("finds every occurrence, left to right, ignoring case", () => {
    const row = "bash: foo: command not found; Command Not Found again";
    expect(matcher("command not found").hitsIn(row)).toEqual([
      { start: 11, end: 28 },
      { start: 30, end: 47 },
    ]);
  });

  it("matches case when asked", () => {
    expect(found("Permission denied, permission denied", "Permission", { matchCase: true })).toEqual([
      "Permission",
    ]);
  });

  it("takes the query literally: its regular expression characters are plain", () => {
    expect(found("a.b axb (x+)", "a.b")).toEqual(["a.b"]);
    expect(found("a.b axb (x+)", "(x+)")).toEqual(["(x+)"]);
  });

  it("indexes rows in UTF-16 units: wide characters and emoji before a match move it on", () => {
    const row = "日本語 🎉 ls: 拒否 denied";
    const [hit] = matcher("denied").hitsIn(row);
    expect(hit).toEqual({ start: row.indexOf("denied"), end: row.indexOf("denied") + 6 });
    expect(row.indexOf("denied")).toBe(14);
    expect(found(row, "🎉")).toEqual(["🎉"]);
    expect(found(row, "拒否")).toEqual(["拒否"]);
  });

  it("ignores case beyond ASCII", () => {
    expect(found("ÉCOLE école", "école")).toEqual(["ÉCOLE", "école"]);
    expect(found("ΟΔΟΣ οδος", "οδοσ")).toEqual(["ΟΔΟΣ", "οδος"]);
  });

  it("finds at most the cap in a row", () => {
    expect(matcher("a").hitsIn("a".repeat(500))).toHaveLength(maxHits);
  });

  it("is no search when empty", () => {
    expect(compileSearch({ query: "", regex: true, matchCase: false })).toBeUndefined();
  });
});

describe("regular expression search", () => {
  const regex = { regex: true };

  it("finds matches ignoring case unless asked not to", () => {
    expect(found("ERROR: disk full; error: quota", "error: \\w+", regex)).toEqual([
      "ERROR: disk",
      "error: quota",
    ]);
    expect(found("ERROR: disk full; error: quota", "error: \\w+", { ...regex, matchCase: true })).toEqual([
      "error: quota",
    ]);
    expect(found("Permission denied; No such file", "permission denied|no such file", regex)).toEqual([
      "Permission denied",
      "No such file",
    ]);
  });

  it("ignores case by folding, keeping positions where lower case would change a length", () => {
    // İ lowers to two units elsewhere; folded, it is one "i" and the match after it stays in place.
    const row = "İSTANBUL istanbul";
    expect(matcher("istanbul", regex).hitsIn(row)).toEqual([
      { start: 0, end: 8 },
      { start: 9, end: 17 },
    ]);
    expect(found("ΟΔΟΣ οδος", "οδοσ", regex)).toEqual(["ΟΔΟΣ", "οδος"]);
  });

  it("skips empty matches and caps the rest", () => {
    expect(matcher("x*", regex).hitsIn("abc")).toEqual([]);
    expect(found("ab xxb", "x*", regex)).toEqual(["xx"]);
    expect(matcher(".", regex).hitsIn("y".repeat(300))).toHaveLength(maxHits);
  });

  it("never ends a match between the halves of an emoji", () => {
    const row = "ok 🎉 done";
    expect(found(row, "ok .", regex)).toEqual(["ok 🎉"]);
    expect(found(row, ". done", regex)).toEqual(["🎉 done"]);
  });

  it("refuses what the linear-time engine cannot run, and syntax errors, saying why", () => {
    for (const pattern of ["(a)\\1", "(?=a)a", "(?<=a)b", "a{2,1000}"]) {
      expect(() => matcher(pattern, regex), pattern).toThrow(BadPattern);
    }
    expect(() => matcher("(a)\\1", regex)).toThrow(/back-references/);
    expect(() => matcher("(unclosed", regex)).toThrow(/Unterminated group/);
    expect(() => matcher("[z-a]", { ...regex, matchCase: true })).toThrow(/out of order/);
  });

  it("runs catastrophic patterns in linear time, where backtracking would take hours", () => {
    // Backtracking tries 2^n ways for these against n a's and a "!": 2^60 steps would never end, so
    // that the test finishes at all (vitest's timeout would fail it) is the proof; no timing.
    const row = `${"a".repeat(60)}!`;
    for (const pattern of ["(a+)+$", "(a|aa)+$", "(\\w+\\s?)*$", "(a*)*c"]) {
      expect(matcher(pattern, { ...regex, matchCase: true }).hitsIn(row), pattern).toEqual([]);
      expect(matcher(pattern, regex).hitsIn(row.toUpperCase()), pattern).toEqual([]);
    }
  });

  it("finds the same before and after catastrophic rows (which move it to the linear-time engine)", () => {
    const nested = matcher("(a+)+$", { ...regex, matchCase: true });
    const before = nested.hitsIn("xx aaa");
    expect(before).toEqual([{ start: 3, end: 6 }]);
    for (let row = 0; row < 20; row += 1) expect(nested.hitsIn(`${"a".repeat(60)}!`)).toEqual([]);
    expect(nested.hitsIn("xx aaa")).toEqual(before);
  });
});

describe("case folding", () => {
  // The rewritten pattern over folded text must find what V8's own /i finds over the text.
  const cases: [string, string][] = [
    ["[A-F]+", "deadBEEF cafe XYZ"],
    ["[^a-z ]+", "Hello WORLD 123"],
    ["[^A-Z]", "ABCdef"],
    ["\\x41b", "AB ab aB"],
    ["\\u0041", "a A"],
    ["[\\x41-\\x43]", "abc ABC d"],
    ["\\Mx", "mx MX"],
    ["\\d+[a-c]", "12A 34b 5d"],
    ["[\\w-]+", "Foo-Bar baz"],
    ["\\bWord\\b", "a word, WORDS, Word"],
    ["(?<Name>AB)c", "abc ABC"],
    ["ÉTÉ", "été ÉTÉ"],
    ["[À-Ý]+", "àéî ÀÉÎ"],
    ["\\s\\S", "a B"],
  ];
  it.each(cases)("finds for %s what /i finds", (pattern, text) => {
    // eslint-disable-next-line no-invalid-regexp -- `l` is V8's linear-time engine (wall-search.ts enables it)
    const ours = [...foldCase(text).matchAll(new RegExp(foldPattern(pattern), "gl"))].map((m) =>
      text.slice(m.index, m.index + m[0].length),
    );
    const native = [...text.matchAll(new RegExp(pattern, "gi"))].map((m) => m[0]);
    expect(ours).toEqual(native);
  });

  it("keeps every length", () => {
    const text = "İı ΣΑΣ ß ǅ 𐐀 ﬀ Ω K";
    expect(foldCase(text)).toHaveLength(text.length);
  });

  it("adds to a class only the folded forms it lacks", () => {
    expect(foldPattern("[A-Z]")).toBe("[A-Z\\u0061-\\u007a]");
    expect(foldPattern("[a-z]")).toBe("[a-z]");
    expect(foldPattern("[\\u0000-\\uffff]")).toBe("[\\u0000-\\uffff]");
  });
});
