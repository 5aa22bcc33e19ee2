// The screen copy as the class wall reads it: visible rows as text, the cursor, and a version that
// moves only when output was parsed or the screen resized.
import { afterEach, describe, expect, it } from "vitest";
import { ConsoleScreen, searchableScrollbackRows } from "./screen.ts";

const screens: ConsoleScreen[] = [];

function aScreen({ archiveAfterMs = 60_000, scrollback = 10 } = {}): ConsoleScreen {
  const screen = new ConsoleScreen(
    {
      cols: 20,
      rows: 4,
      scrollback,
      archiveAfterMs,
      archiveBusyShare: 0,
      batchIntervalMs: 0,
      batchBytes: 0,
    },
    () => undefined,
  );
  screens.push(screen);
  return screen;
}

afterEach(() => {
  for (const screen of screens.splice(0)) screen.dispose();
});

describe("ConsoleScreen text and version", () => {
  it("gives the visible rows (scrolled-off lines excluded) and the cursor", async () => {
    const screen = aScreen();
    screen.write(Buffer.from("one\r\ntwo\r\nthree\r\nfour\r\nfive\r\n$ ls"));
    await screen.snapshot();
    expect(screen.text()).toEqual({ rows: ["three", "four", "five", "$ ls"], cursor: { x: 4, y: 3 } });
  });

  it("moves the version when output is parsed or the size changes, and only then", async () => {
    const screen = aScreen();
    const initial = screen.version;
    screen.text();
    expect(screen.version).toBe(initial);
    screen.write(Buffer.from("hello"));
    await screen.snapshot();
    const afterOutput = screen.version;
    expect(afterOutput).toBeGreaterThan(initial);
    screen.text();
    expect(screen.version).toBe(afterOutput);
    screen.resize(30, 6);
    expect(screen.version).toBeGreaterThan(afterOutput);
    expect(screen.text().rows).toHaveLength(6);
  });

  it("gives the newest rows above the screen for searching, archived or not", async () => {
    const lines = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, index) => `line ${from + index}`);
    const screen = aScreen({ archiveAfterMs: 0, scrollback: 1000 });
    screen.write(Buffer.from(lines(1, 30).join("\r\n")));
    await screen.snapshot();
    // Still in the terminal: 26 rows above the 4 on screen.
    expect(screen.searchableScrollback()).toEqual(lines(1, 26));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(screen.terminalRows).toBe(4);
    expect(screen.searchableScrollback()).toEqual(lines(1, 26));
    // More than the wall searches: the newest of them, half archived and half not.
    screen.write(Buffer.from(`\r\n${lines(31, 200).join("\r\n")}`));
    await screen.snapshot();
    await new Promise((resolve) => setTimeout(resolve, 20));
    screen.write(Buffer.from(`\r\n${lines(201, 250).join("\r\n")}`));
    await screen.snapshot();
    expect(screen.searchableScrollback()).toEqual(lines(247 - searchableScrollbackRows, 246));
  });

  it("reads again only the rows that scrolled up, and everything when they do not line up", async () => {
    const screen = aScreen({ scrollback: 1000 });
    const print = async (text: string) => {
      screen.write(Buffer.from(text));
      await screen.snapshot();
    };
    await print("a\r\nb\r\nc\r\nd\r\ne\r\nf");
    expect(screen.searchableScrollback()).toEqual(["a", "b"]);
    await print("\r\ng\r\nh");
    expect(screen.searchableScrollback()).toEqual(["a", "b", "c", "d"]);
    // A scroll region scrolls without adding to the scrollback: read anew, not taken for new rows.
    await print("\x1b[2;3r\x1b[3;1H\n\n\x1b[r\x1b[4;1H");
    expect(screen.searchableScrollback()).toEqual(["a", "b", "c", "d"]);
    await print("\r\ni");
    expect(screen.searchableScrollback()).toEqual(["a", "b", "c", "d", "e"]);
    // A narrower screen reflows the rows above it.
    await print(`\r\n${"x".repeat(30)}\r\n\r\n\r\n\r\n`);
    expect(screen.searchableScrollback()).toContain("x".repeat(20));
    screen.resize(10, 4);
    const reflowed = screen.searchableScrollback();
    expect(reflowed).toContain("x".repeat(10));
    expect(reflowed.every((row) => row.length <= 10)).toBe(true);
  });
});
