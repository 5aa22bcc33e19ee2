import { describe, expect, it } from "vitest";
import { keystrokesOf } from "./paste-keys.ts";

describe("a paste as keystrokes", () => {
  it("presses each key, with Shift around what a US keyboard types shifted, Return for a line end", () => {
    const typed = keystrokesOf("aB!\r\n");
    expect("strokes" in typed && typed.strokes).toEqual([
      [
        { keysym: 0x61, down: true },
        { keysym: 0x61, down: false },
      ],
      [
        { keysym: 0xffe1, down: true },
        { keysym: 0x42, down: true },
        { keysym: 0x42, down: false },
        { keysym: 0xffe1, down: false },
      ],
      [
        { keysym: 0xffe1, down: true },
        { keysym: 0x21, down: true },
        { keysym: 0x21, down: false },
        { keysym: 0xffe1, down: false },
      ],
      [
        { keysym: 0xff0d, down: true },
        { keysym: 0xff0d, down: false },
      ],
    ]);
  });

  it("names the first character no keyboard key types", () => {
    expect(keystrokesOf("café")).toEqual({ untypable: "é" });
  });
});
