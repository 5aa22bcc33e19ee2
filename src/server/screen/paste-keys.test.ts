import { describe, expect, it, vi } from "vitest";
import { keystrokesOf, PasteTypist, type KeyStroke } from "./paste-keys.ts";

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

describe("the paste typist", () => {
  it("stops where it is when told, or when it may no longer type, and says how far it got", () => {
    vi.useFakeTimers();
    try {
      const strokes = (keystrokesOf("abcdef") as { strokes: KeyStroke[][] }).strokes;
      const typist = new PasteTypist(20);
      const pressed: number[] = [];
      const typed: number[] = [];
      typist.type(
        strokes,
        () => (stroke) => pressed.push(stroke.keysym),
        (count) => typed.push(count),
      );
      vi.advanceTimersByTime(20);
      typist.stop();
      expect(typed).toEqual([2]);
      expect(typist.busy).toBe(false);

      let mayType = true;
      typist.type(
        strokes,
        () => (mayType ? () => undefined : undefined),
        (count) => typed.push(count),
      );
      vi.advanceTimersByTime(40);
      mayType = false;
      vi.advanceTimersByTime(20);
      expect(typed).toEqual([2, 3]);
    } finally {
      vi.useRealTimers();
    }
  });
});
