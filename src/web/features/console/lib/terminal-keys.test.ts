import { describe, expect, it } from "vitest";
import { sequenceFor, withControl } from "./terminal-keys.ts";

describe("sequenceFor", () => {
  it("sends arrows in the cursor-key mode the guest asked for", () => {
    expect(sequenceFor("up", false)).toBe("\x1b[A");
    expect(sequenceFor("left", true)).toBe("\x1bOD");
    expect(sequenceFor("escape", true)).toBe("\x1b");
    expect(sequenceFor("tab", false)).toBe("\t");
  });
});

describe("withControl", () => {
  it("turns letters and the usual symbols into control characters", () => {
    expect(withControl("c")).toBe("\x03");
    expect(withControl("C")).toBe("\x03");
    expect(withControl("d")).toBe("\x04");
    expect(withControl("[")).toBe("\x1b");
    expect(withControl(" ")).toBe("\x00");
  });

  it("leaves what has no control form alone", () => {
    expect(withControl("1")).toBe("1");
    expect(withControl("ab")).toBe("ab");
  });
});
