import { describe, expect, it } from "vitest";
import { parseScoreLine } from "./score-line.ts";

describe("parseScoreLine", () => {
  it("reads the last non-empty line", () => {
    expect(parseScoreLine("checking\nscore=0.75\n\n")).toBe(0.75);
    expect(parseScoreLine("score=1")).toBe(1);
    expect(parseScoreLine("score=.5\n")).toBe(0.5);
    expect(parseScoreLine("  score=0  \n")).toBe(0);
  });

  it("ignores a score line that is not the last line", () => {
    expect(parseScoreLine("score=0.5\ndone\n")).toBeNull();
  });

  it("ignores values outside 0..1 and anything not a plain number", () => {
    for (const line of ["score=1.5", "score=-0.5", "score=1e-1", "score=", "score = 0.5", "SCORE=0.5"]) {
      expect(parseScoreLine(`${line}\n`)).toBeNull();
    }
  });
});
