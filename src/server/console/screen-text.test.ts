// The screen copy as the class wall reads it: visible rows as text, the cursor, and a version that
// moves only when output was parsed or the screen resized.
import { afterEach, describe, expect, it } from "vitest";
import { ConsoleScreen } from "./screen.ts";

const screens: ConsoleScreen[] = [];

function aScreen(): ConsoleScreen {
  const screen = new ConsoleScreen(
    {
      cols: 20,
      rows: 4,
      scrollback: 10,
      archiveAfterMs: 60_000,
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
});
