import { describe, expect, it } from "vitest";
import { goQuote } from "./go-quote.ts";

describe("goQuote", () => {
  it("quotes plain names like JSON", () => {
    expect(goQuote("system:serviceaccount:lab-console:lab-console")).toBe(
      '"system:serviceaccount:lab-console:lab-console"',
    );
  });

  it("escapes quotes, backslashes and control characters the way strconv.Quote does", () => {
    expect(goQuote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(goQuote("tab\tbell\x07nul\x00del\x7f")).toBe('"tab\\tbell\\anul\\x00del\\x7f"');
  });

  it("keeps printable Unicode and escapes the rest", () => {
    expect(goQuote("Jürgen 😀")).toBe('"Jürgen 😀"');
    expect(goQuote("zero\u200bwidth")).toBe('"zero\\u200bwidth"');
    expect(goQuote("nbsp\u00a0")).toBe('"nbsp\\u00a0"');
  });
});
