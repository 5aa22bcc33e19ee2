import serializePackage from "@xterm/addon-serialize";
import headlessPackage, { type ITerminalAddon } from "@xterm/headless";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConsoleScreen } from "./screen.ts";

const options = { cols: 40, rows: 5, scrollback: 20 };

const screens: ConsoleScreen[] = [];
afterEach(() => {
  for (const screen of screens.splice(0)) screen.dispose();
});

function aScreen(
  scrollback = 100,
  archiveAfterMs = 60_000,
  archiveBusyShare = 0,
  {
    parseQuietMs = 0,
    parseAtLatestMs = 0,
    parseBatchBytes = 1024 * 1024,
    onParsed = () => {},
  }: {
    parseQuietMs?: number;
    parseAtLatestMs?: number;
    parseBatchBytes?: number;
    onParsed?: () => void;
  } = {},
): ConsoleScreen {
  const screen = new ConsoleScreen(
    {
      ...options,
      scrollback,
      searchableRows: 100,
      archiveAfterMs,
      archiveBusyShare,
      parseQuietMs,
      parseAtLatestMs,
      parseBatchBytes,
    },
    onParsed,
  );
  screens.push(screen);
  return screen;
}

describe("ConsoleScreen", () => {
  it("snapshots exactly the output written before the snapshot was asked for", async () => {
    const screen = aScreen();
    screen.write(Buffer.from("first line\r\n\x1b[31mred\x1b[0m"));
    const snapshot = screen.snapshot();
    screen.write(Buffer.from("\r\nlater line\r\n"));
    const text = await snapshot;
    expect(text).toContain("first line");
    expect(text).toContain("\x1b[31mred");
    expect(text).not.toContain("later line");
  });

  it("keeps an escape sequence split across writes whole", async () => {
    const screen = aScreen();
    screen.write(Buffer.from("\x1b[3"));
    screen.write(Buffer.from("2mgreen\x1b[0m"));
    expect(await screen.snapshot()).toContain("\x1b[32mgreen");
  });

  it("keeps only the configured scrollback", async () => {
    const screen = aScreen(10);
    screen.write(Buffer.from(Array.from({ length: 100 }, (_, line) => `line-${line}`).join("\r\n")));
    const text = await screen.snapshot();
    expect(text).toContain("line-99");
    expect(text).toContain("line-85");
    expect(text).not.toContain("line-84");
  });

  it("snapshots the lines before it, whatever the run they are in prints after it", async () => {
    const screen = aScreen(10);
    screen.write(Buffer.from("start\r\n"));
    const parsing = screen.whenParsed();
    const before = Array.from({ length: 20 }, (_, line) => `L${line}\r\n`).join("");
    screen.write(Buffer.from(before));
    const snapshot = screen.snapshot();
    // The same plain run goes on past the snapshot, long enough to push its lines off, then ends.
    screen.write(Buffer.from(`${Array.from({ length: 15 }, (_, line) => `M${line}\r\n`).join("")}\x1b[m`));
    await parsing;
    expect(await snapshot).toBe(await reference(Buffer.from(`start\r\n${before}`), 10));
  });

  it("resizes after the output written before the resize, parsed or not", async () => {
    const screen = aScreen(100, 60_000, 0, { parseQuietMs: 60_000, parseAtLatestMs: 60_000 });
    // Printed at column 30 of 40, then the guest narrows to 20: the row wraps, the y goes to column 10.
    const output = Buffer.from("\x1b[2;30Hy");
    screen.write(output);
    screen.resize(20, options.rows);
    const expected = await new Promise<string>((resolve) => {
      const terminal = new headlessPackage.Terminal({ ...options, scrollback: 100, allowProposedApi: true });
      const serializer = new serializePackage.SerializeAddon();
      terminal.loadAddon(serializer as unknown as ITerminalAddon);
      terminal.write(output, () => {
        terminal.resize(20, options.rows);
        resolve(serializer.serialize());
        terminal.dispose();
      });
    });
    expect(await screen.snapshot()).toBe(expected);
  });

  it("logs nothing for what a guest prints, however odd (xterm.js logs a DEL as a parsing error)", async () => {
    const logged = (["error", "warn", "info", "log", "debug"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation(() => {}),
    );
    try {
      const screen = aScreen();
      screen.write(Buffer.from(`${"a\x7f".repeat(50)}\x1b[999;999;999z\x1bP?bad\x1b\\\r\n`));
      await screen.snapshot();
      for (const spy of logged) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of logged) spy.mockRestore();
    }
  });

  it("answers a pending snapshot when disposed", async () => {
    const screen = aScreen();
    screen.write(Buffer.from("x".repeat(100_000)));
    const snapshot = screen.snapshot();
    screen.dispose();
    expect(await snapshot).toBe("");
  });
});

/** What a terminal shows after all of `output`, parsed byte for byte with nothing skipped. */
function reference(output: Buffer, scrollback = options.scrollback): Promise<string> {
  const terminal = new headlessPackage.Terminal({ ...options, scrollback, allowProposedApi: true });
  const serializer = new serializePackage.SerializeAddon();
  terminal.loadAddon(serializer as unknown as ITerminalAddon);
  return new Promise((resolve) =>
    terminal.write(output, () => {
      resolve(serializer.serialize());
      terminal.dispose();
    }),
  );
}

/** A small deterministic random source, so a failure can be replayed. */
function randomSource(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  return { next, int: (below: number) => Math.floor(next() * below) };
}

/** The C0 controls xterm.js ignores (CAN and SUB only cancel a sequence), and DEL. */
const ignoredControls =
  "\x00\x01\x02\x03\x04\x05\x06\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1c\x1d\x1e\x1f\x7f";

/**
 * Shell-like output: floods of plain lines between colours, cursor moves, titles, full-screen
 * programs, with the controls a flood may carry (a bell, VT, FF, ignored ones) and charset shifts.
 */
function outputOf(seed: number): Buffer {
  const random = randomSource(seed);
  const words = ["ls", "make", "ok", "°C", "日本", "tab\there", "back\b\bsp", "x".repeat(60)];
  words.push("ding\x07", "down\x0bvt", "form\x0cfeed", `quiet${ignoredControls}ly`);
  const word = () => words[random.int(words.length)]!;
  const pieces: string[] = [];
  for (let piece = 0; piece < 40; piece += 1) {
    switch (random.int(9)) {
      case 0:
      case 1:
      case 2: {
        const count = random.int(80);
        for (let line = 0; line < count; line += 1) pieces.push(`${word()} ${line} ${word()}\r\n`);
        break;
      }
      case 3:
        pieces.push(`\x1b[3${random.int(8)}m`, word(), "\x1b[0m");
        break;
      case 4:
        pieces.push(`\x1b[${1 + random.int(5)};${1 + random.int(40)}H`, "\x1b[2K", word());
        break;
      case 5:
        pieces.push(`\x1b]0;title\r\n${word()}\r\nmore\x07`);
        break;
      case 6:
        pieces.push("\x1b[?1049h\x1b[H", word(), "\r\n".repeat(random.int(30)), word(), "\x1b[?1049l");
        break;
      case 7:
        pieces.push(`\u009b1m${word()}\u009b0m`, `\x1bP1$r${word()}\r\n${word()}\x1b\\`);
        break;
      case 8:
        // G1 is line drawing; SO shifts to it (lqqk draws a box's top), and it stays so into a
        // flood's lines until SI, so a flood's head printed after SO is not one to skip.
        pieces.push("\x1b)0\x0elqqk\r\n");
        for (let line = random.int(60); line > 0; line -= 1) pieces.push(`${word()} ${line}\r\n`);
        if (random.int(2) === 0) pieces.push("\x0f");
        break;
    }
  }
  return Buffer.from(pieces.join(""), "utf8");
}

describe("ConsoleScreen skipping scrolled-away output", () => {
  it("ends with exactly the screen and scrollback of a terminal that parsed every byte", async () => {
    for (let seed = 1; seed <= 25; seed += 1) {
      const output = outputOf(seed);
      const random = randomSource(seed * 7919);
      // Odd seeds gather many chunks in a batch (scanned in place), even ones parse as they come.
      const lazy = { parseQuietMs: 60_000, parseAtLatestMs: 60_000, parseBatchBytes: 64 * 1024 };
      const screen = aScreen(options.scrollback, 60_000, 0, seed % 2 === 1 ? lazy : {});
      const snapshots: Promise<string>[] = [];
      for (let offset = 0; offset < output.length;) {
        const size = 1 + random.int(4000);
        screen.write(output.subarray(offset, offset + size));
        offset += size;
        // Snapshots mid-stream cut batches at odd places.
        if (random.int(4) === 0) snapshots.push(screen.snapshot());
      }
      await Promise.all(snapshots);
      expect(await screen.snapshot(), `seed ${seed}`).toBe(await reference(output));
    }
  });

  it("ends as a terminal that parsed every byte after a flood that began at the top of a full screen", async () => {
    // The flood's first lines overwrite the rows below the cursor only as far as they reach, and
    // reach the bottom row only rows - 1 lines later: what those rows held must still scroll away.
    const fullScreen = Array.from({ length: options.rows }, (_, row) => `row ${row} ${"#".repeat(30)}`).join(
      "\r\n",
    );
    const flood = Array.from({ length: 200 }, (_, line) => `f${line}\r\n`).join("");
    const output = Buffer.from(`${fullScreen}\x1b[1;1H${flood}`, "utf8");
    const screen = aScreen(options.scrollback, 60_000, 0, { parseQuietMs: 60_000, parseAtLatestMs: 60_000 });
    screen.write(output);
    expect(await screen.snapshot()).toBe(await reference(output));
  });

  it("ends as a terminal that parsed every byte after a flood dropped as it came", async () => {
    const flood = (from: number) =>
      Array.from({ length: 14_000 }, (_, line) => `${from + line} ${"flood ".repeat(8)}\r\n`).join("");
    const output = Buffer.from(
      `\x1b[32m$ \x1b[0mcat big${flood(0)}\x1b[31mred${flood(20_000)}\x1b]0;title\x07°é${flood(40_000)}$ `,
      "utf8",
    );
    expect(output.length).toBeGreaterThan(2 * 1024 * 1024);
    const random = randomSource(99);
    const screen = aScreen(options.scrollback, 60_000, 0, { parseQuietMs: 60_000, parseAtLatestMs: 60_000 });
    const snapshots: Promise<string>[] = [];
    for (let offset = 0; offset < output.length;) {
      const size = 1 + random.int(20_000);
      screen.write(output.subarray(offset, offset + size));
      offset += size;
      if (random.int(200) === 0) snapshots.push(screen.snapshot());
    }
    await Promise.all(snapshots);
    expect(screen.backlogBytes).toBeLessThan(512 * 1024);
    expect(await screen.snapshot()).toBe(await reference(output));
  });

  it("parses a steady stream of lines only when its oldest byte waited the longest, to the same screen", async () => {
    const parseAtLatestMs = 60;
    let batches = 0;
    const screen = aScreen(options.scrollback, 60_000, 0, {
      parseQuietMs: 60_000,
      parseAtLatestMs,
      onParsed: () => (batches += 1),
    });
    const lines = Array.from({ length: 3000 }, (_, line) => `${"x".repeat(70)} ${line}\r\n`);
    const startedAt = performance.now();
    // 20 lines a chunk, a chunk every millisecond or so, as a VM printing text sends them.
    for (let line = 0; line < lines.length; line += 20) {
      screen.write(Buffer.from(lines.slice(line, line + 20).join(""), "utf8"));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const elapsedMs = performance.now() - startedAt;
    const whileWriting = batches;
    const text = await screen.snapshot();
    expect(whileWriting).toBeGreaterThan(0);
    expect(whileWriting).toBeLessThanOrEqual(Math.ceil(elapsedMs / parseAtLatestMs));
    expect(text).toBe(await reference(Buffer.from(lines.join(""), "utf8")));
  });

  it("parses once output is quiet, and not before", async () => {
    const parseQuietMs = 40;
    let parsed!: () => void;
    const batch = new Promise<void>((resolve) => (parsed = resolve));
    const screen = aScreen(options.scrollback, 60_000, 0, {
      parseQuietMs,
      parseAtLatestMs: 60_000,
      onParsed: () => parsed(),
    });
    screen.write(Buffer.from("$ ls"));
    const wroteAt = performance.now();
    await batch;
    // Timers fire on the millisecond: allow its rounding.
    expect(performance.now() - wroteAt).toBeGreaterThanOrEqual(parseQuietMs - 1);
    expect(screen.text().rows[0]).toBe("$ ls");
  });

  it("starts a batch at once when a batch's worth of bytes waits", async () => {
    let parsed!: () => void;
    const batch = new Promise<void>((resolve) => (parsed = resolve));
    // Timers far longer than the test may take: only the waiting bytes can start the batch.
    const screen = aScreen(options.scrollback, 60_000, 0, {
      parseQuietMs: 60_000,
      parseAtLatestMs: 60_000,
      parseBatchBytes: 4096,
      onParsed: () => parsed(),
    });
    screen.write(Buffer.from("x".repeat(5000) + "\r\nlast\r\n"));
    await batch;
    expect(screen.text().rows).toContain("last");
  });

  it("parses what was written before a read at once, for the reader to see", async () => {
    const screen = aScreen(options.scrollback, 60_000, 0, { parseQuietMs: 60_000, parseAtLatestMs: 60_000 });
    screen.write(Buffer.from("first\r\nsecond"));
    expect(screen.text().rows[0]).toBe("");
    await screen.whenParsed();
    expect(screen.text().rows.slice(0, 2)).toEqual(["first", "second"]);
  });
});

/** Lets timers run: a screen with `archiveAfterMs` 0 archives its scrollback meanwhile. */
const quietMoment = () => new Promise((resolve) => setTimeout(resolve, 5));

/** What a terminal of the same size shows after writing a serialized screen. */
const shown = (serialized: string, scrollback?: number) =>
  reference(Buffer.from(serialized, "utf8"), scrollback);

describe("ConsoleScreen archiving its scrollback while quiet", () => {
  it("keeps the scrollback out of the terminal, and replays the same screen", async () => {
    const screen = aScreen(options.scrollback, 0);
    screen.write(
      Buffer.from(Array.from({ length: 60 }, (_, line) => `\x1b[3${line % 8}mline-${line}`).join("\r\n")),
    );
    const before = await screen.snapshot();
    expect(screen.terminalRows).toBe(options.rows + options.scrollback);
    await quietMoment();
    expect(screen.terminalRows).toBe(options.rows);
    const after = await screen.snapshot();
    expect(await shown(after)).toBe(await shown(before));
    expect(after).toContain("line-35");
    expect(after).not.toContain("line-34\x1b");
  });

  it("replays none of the scrollback that `clear` or a reset erased, archived or not", async () => {
    for (const erase of ["\x1b[H\x1b[2J\x1b[3J$ ", "\x1bc$ "]) {
      const screen = aScreen(options.scrollback, 0);
      const lines = Buffer.from(Array.from({ length: 60 }, (_, line) => `line-${line}`).join("\r\n"));
      screen.write(lines);
      await screen.snapshot();
      await quietMoment();
      screen.write(Buffer.from(erase));
      const replay = await screen.snapshot();
      expect(replay).not.toContain("line-");
      expect(await shown(replay)).toBe(await reference(Buffer.concat([lines, Buffer.from(erase)])));
    }
  });

  it("ends with the screen and scrollback of a terminal that parsed every byte, quiet moments or not", async () => {
    for (let seed = 1; seed <= 25; seed += 1) {
      const output = outputOf(seed);
      const random = randomSource(seed * 104729);
      const screen = aScreen(options.scrollback, 0);
      for (let offset = 0; offset < output.length;) {
        const size = 1 + random.int(4000);
        screen.write(output.subarray(offset, offset + size));
        offset += size;
        if (random.int(3) === 0) {
          await screen.snapshot();
          await quietMoment();
        }
      }
      const text = await screen.snapshot();
      expect(await shown(text), `seed ${seed}`).toBe(await shown(await reference(output)));
    }
  });

  it("archives between slices of output in full flow, and ends as a terminal that parsed every byte", async () => {
    const scrollback = 1000;
    for (let seed = 1; seed <= 10; seed += 1) {
      const output = Buffer.concat(Array.from({ length: 12 }, (_, part) => outputOf(seed * 100 + part)));
      const screen = aScreen(scrollback, 60_000, 1);
      let mostRows = 0;
      for (let offset = 0; offset < output.length; offset += 64 * 1024) {
        screen.write(output.subarray(offset, offset + 64 * 1024));
        await screen.snapshot();
        mostRows = Math.max(mostRows, screen.terminalRows);
      }
      // Never near the whole scrollback (it reaches 1,005 rows without archiving between slices):
      // 300 rows of it at most, and what one 4 KiB slice adds.
      expect(mostRows, `seed ${seed}`).toBeLessThan(600);
      const text = await screen.snapshot();
      expect(await shown(text, scrollback), `seed ${seed}`).toBe(
        await shown(await reference(output, scrollback), scrollback),
      );
    }
  });

  it("leaves the terminal whole while a scroll region is set", async () => {
    const screen = aScreen(options.scrollback, 0);
    const output = Buffer.from(`${"line\r\n".repeat(30)}\x1b[2;4r\x1b[4H${"in region\r\n".repeat(10)}`);
    screen.write(output);
    await screen.snapshot();
    await quietMoment();
    expect(screen.terminalRows).toBe(options.rows + options.scrollback);
    screen.write(Buffer.from("\x1b[r"));
    await screen.snapshot();
    await quietMoment();
    expect(screen.terminalRows).toBe(options.rows);
  });
});
