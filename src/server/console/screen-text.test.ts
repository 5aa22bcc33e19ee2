// The screen copy as the class wall reads it: visible rows as text, the cursor, and a version that
// moves only when output was written or the screen resized.
import { afterEach, describe, expect, it } from "vitest";
import { ConsoleScreen } from "./screen.ts";

const screens: ConsoleScreen[] = [];

function aScreen({ archiveAfterMs = 60_000, scrollback = 10, searchableRows = 100 } = {}): ConsoleScreen {
  const screen = new ConsoleScreen(
    {
      cols: 20,
      rows: 4,
      scrollback,
      searchableRows,
      archiveAfterMs,
      archiveBusyShare: 0,
      parseQuietMs: 0,
      parseAtLatestMs: 0,
      parseBatchBytes: 0,
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

  it("moves the version when output is written or the size changes, and only then", async () => {
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
    expect(screen.searchableScrollback().rows).toEqual(lines(1, 26));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(screen.terminalRows).toBe(4);
    expect(screen.searchableScrollback().rows).toEqual(lines(1, 26));
    // More than the wall searches: the newest of them, half archived and half not.
    screen.write(Buffer.from(`\r\n${lines(31, 200).join("\r\n")}`));
    await screen.snapshot();
    await new Promise((resolve) => setTimeout(resolve, 20));
    screen.write(Buffer.from(`\r\n${lines(201, 250).join("\r\n")}`));
    await screen.snapshot();
    expect(screen.searchableScrollback().rows).toEqual(lines(147, 246));
  });

  it("reads only the rows that scrolled up, as they were when they left", async () => {
    const screen = aScreen({ scrollback: 1000 });
    const print = async (text: string) => {
      screen.write(Buffer.from(text));
      await screen.snapshot();
    };
    await print("a\r\nb\r\nc\r\nd\r\ne\r\nf");
    expect(screen.searchableScrollback().rows).toEqual(["a", "b"]);
    await print("\r\ng\r\nh");
    expect(screen.searchableScrollback().rows).toEqual(["a", "b", "c", "d"]);
    // A scroll region scrolls without adding to the scrollback: read anew, not taken for new rows.
    await print("\x1b[2;3r\x1b[3;1H\n\n\x1b[r\x1b[4;1H");
    expect(screen.searchableScrollback().rows).toEqual(["a", "b", "c", "d"]);
    await print("\r\ni");
    expect(screen.searchableScrollback().rows).toEqual(["a", "b", "c", "d", "e"]);
    // A narrower screen reflows the rows: those read keep their width, and count as read.
    await print(`\r\n${"x".repeat(30)}\r\n\r\n\r\n\r\n`);
    const beforeResize = screen.searchableScrollback().rows;
    expect(beforeResize.slice(-2)).toEqual(["x".repeat(20), "x".repeat(10)]);
    screen.resize(10, 4);
    expect(screen.searchableScrollback().rows).toEqual(beforeResize);
    await print("one two three four\r\n\r\n\r\n\r\n");
    expect(screen.searchableScrollback().rows.slice(-2)).toEqual(["one two th", "ree four"]);
  });

  it("keeps what `clear` erases: the screen, and the scrollback that is erased next", async () => {
    const screen = aScreen({ scrollback: 1000 });
    const print = async (text: string) => {
      screen.write(Buffer.from(text));
      await screen.snapshot();
    };
    await print("$ seq 3\r\n1\r\n2\r\n3\r\n$ echo hello_x\r\nhello_x\r\n$ clear\r\n");
    // bash's `clear` with TERM=xterm: home, erase the screen (ED 2), erase the scrollback (ED 3).
    await print("\x1b[H\x1b[2J\x1b[3J$ ");
    expect(screen.text().rows).toEqual(["$ ", "", "", ""]);
    expect(screen.searchableScrollback().rows).toEqual([
      "$ seq 3",
      "1",
      "2",
      "3",
      "$ echo hello_x",
      "hello_x",
      "$ clear",
    ]);
    // What comes after follows what was erased; with TERM=linux `clear` erases from the top left (ED 0).
    await print("ls\r\na b\r\n$ clear\r\n\x1b[H\x1b[J\x1b[3J$ ");
    expect(screen.searchableScrollback().rows.slice(5)).toEqual([
      "hello_x",
      "$ clear",
      "$ ls",
      "a b",
      "$ clear",
    ]);
    // Only a whole screen counts: erasing below a line that stays is a redraw, not text going away.
    await print("x\r\ny\x1b[1;3H\x1b[J");
    expect(screen.searchableScrollback().rows).toHaveLength(10);
  });

  it("keeps the screen a reset erases, and nothing of the alternate screen", async () => {
    const screen = aScreen({ scrollback: 1000 });
    const print = async (text: string) => {
      screen.write(Buffer.from(text));
      await screen.snapshot();
    };
    await print("a\r\nb\r\nc\r\nd\r\ne\r\n$ vim");
    // vim: the alternate screen, erased as it draws and again as it closes.
    await print("\x1b[?1049h\x1b[H\x1b[2J~ vim text\x1b[H\x1b[2J\x1b[?1049l\r\n$ reset\r\n");
    expect(screen.searchableScrollback().rows).toEqual(["a", "b", "c", "d"]);
    await print("\x1bc$ ");
    expect(screen.searchableScrollback().rows).toEqual(["a", "b", "c", "d", "e", "$ vim", "$ reset"]);
    await print("\r\n1\r\n2\r\n3\r\n4");
    expect(screen.searchableScrollback().rows.slice(-2)).toEqual(["$ reset", "$ "]);
  });

  it("keeps the newest of the rows that left, however they left", async () => {
    const screen = aScreen({ archiveAfterMs: 0, scrollback: 20, searchableRows: 30 });
    const lines = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, index) => `line ${from + index}`);
    screen.write(Buffer.from(`${lines(1, 24).join("\r\n")}\r\n\x1b[H\x1b[2J\x1b[3J`));
    await screen.snapshot();
    await new Promise((resolve) => setTimeout(resolve, 20));
    screen.write(Buffer.from(`${lines(25, 40).join("\r\n")}`));
    await screen.snapshot();
    expect(screen.searchableScrollback()).toMatchObject({ rows: lines(7, 36), first: 5 });
  });
});
