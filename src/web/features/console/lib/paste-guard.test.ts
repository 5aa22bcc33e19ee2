import { describe, expect, it } from "vitest";
import { lineCount, pasteNeedsConfirmation } from "./paste-guard.ts";

describe("paste guard", () => {
  it("counts lines whatever their endings, not counting a final line break", () => {
    expect(lineCount("")).toBe(0);
    expect(lineCount("ls -l")).toBe(1);
    expect(lineCount("ls -l\n")).toBe(1);
    expect(lineCount("a\r\nb\rc\nd")).toBe(4);
  });

  it("asks from five lines on", () => {
    expect(pasteNeedsConfirmation("1\n2\n3\n4\n")).toBe(false);
    expect(pasteNeedsConfirmation("1\n2\n3\n4\n5")).toBe(true);
  });
});
