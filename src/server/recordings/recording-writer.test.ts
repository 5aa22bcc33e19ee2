// The writer alone, over a recording kept in memory the way a storage keeps it (the head appended to,
// the tail replaced whole): output is kept raw as it arrives and becomes asciicast as it is stored,
// and what a player and staff read of it is as exact as when every chunk was converted on arrival.
import { describe, expect, it } from "vitest";
import { eventLine, gapMarkerLine, headerLine, parseGapMarker } from "./asciicast.ts";
import { RecordingWriter } from "./recording-writer.ts";
import {
  eventsOf,
  expectGapAccountsFor,
  expectWellFormed,
  floodText,
  gapOf,
  outputOf,
} from "./testing/cast.ts";
import { aHeader } from "./testing/storage-contract.ts";

const header = aHeader("s-writer");
const startedAtMs = header.timestamp * 1000;
const smallCap = { maxBytes: 64 * 1024, tailBytes: 8 * 1024 };

interface Stored {
  /** Bytes already in the head, header line included. */
  headBytes: number;
  tail: string;
}

/** A writer and the recording it stores, as a download would read it. */
function recordingWith(limits: { maxBytes: number; tailBytes: number }, stored?: Stored) {
  const batches: string[] = [];
  let tail = stored?.tail;
  const writer = new RecordingWriter({
    header,
    headBytes: stored?.headBytes ?? 0,
    tail,
    ...limits,
    tailWriteIntervalMs: 1_000,
    append: async (batch) => void batches.push(batch.text),
    replaceTail: async (batch) => void (tail = batch.text),
    onError: (error) => {
      throw error;
    },
  });
  return {
    writer,
    /** The head's batches, one string each, as appended. */
    batches,
    cast: () => headerLine(header) + batches.join("") + (tail ?? ""),
  };
}

/** Prints `text` in chunks of `chunkBytes`, a millisecond apart from `fromMs` on; returns each chunk's time. */
function print(writer: RecordingWriter, text: string | Buffer, chunkBytes: number, fromMs: number): number[] {
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  const times: number[] = [];
  for (let at = 0; at < bytes.length; at += chunkBytes) {
    const atMs = fromMs + times.length;
    writer.output(bytes.subarray(at, at + chunkBytes), atMs);
    times.push(atMs);
  }
  return times;
}

const secondsAt = (atMs: number) => (atMs - startedAtMs) / 1000;

describe("a recording's events", () => {
  it("are one per millisecond in which output arrived, at its time", async () => {
    const { writer, cast } = recordingWith(smallCap);
    for (const chunk of ["one ", "millisecond ", "apart\r\n"])
      writer.output(Buffer.from(chunk), startedAtMs + 100);
    writer.output(Buffer.from("the next\r\n"), startedAtMs + 101);
    await writer.flushed();
    expect(eventsOf(cast())).toEqual([
      [0.1, "o", "one millisecond apart\r\n"],
      [0.101, "o", "the next\r\n"],
    ]);
  });

  it("keep a character split across chunks whole", async () => {
    const { writer, cast } = recordingWith(smallCap);
    const euro = Buffer.from("€");
    writer.output(Buffer.concat([Buffer.from("a"), euro.subarray(0, 1)]), startedAtMs + 1);
    writer.output(euro.subarray(1, 2), startedAtMs + 2);
    writer.output(Buffer.concat([euro.subarray(2), Buffer.from("b")]), startedAtMs + 3);
    await writer.flushed();
    expect(eventsOf(cast())).toEqual([
      [0.001, "o", "a"],
      [0.003, "o", "€b"],
    ]);
  });

  it("keep a character split where the head filled up whole, in the tail", async () => {
    const { writer, cast } = recordingWith(smallCap);
    // 1,000-byte chunks of 3-byte characters: two chunk edges in three cut a character, the one where
    // the head filled up among them; a little past the head, so that the tail lets nothing go.
    const printed = "€".repeat(20_000);
    print(writer, printed, 1_000, startedAtMs);
    await writer.flushed();
    expect(gapOf(cast())).toBeUndefined();
    expect(outputOf(cast())).toBe(printed);
    expectWellFormed(cast(), smallCap.maxBytes);
  });

  it("keep a character whose first bytes filled the head exactly whole, in the tail", async () => {
    const first = eventLine(0.5, "o", "xxxxxxxxxx");
    const { writer, batches, cast } = recordingWith({
      maxBytes: Buffer.byteLength(headerLine(header) + first) + smallCap.tailBytes,
      tailBytes: smallCap.tailBytes,
    });
    const euro = Buffer.from("€");
    writer.output(Buffer.concat([Buffer.from("xxxxxxxxxx"), euro.subarray(0, 1)]), startedAtMs + 500);
    await writer.flushed();
    expect(batches).toEqual([first]);
    writer.output(Buffer.concat([euro.subarray(1), Buffer.from("yy")]), startedAtMs + 600);
    await writer.flushed();
    expect(outputOf(cast())).toBe("xxxxxxxxxx€yy");
  });

  it("are not made as output arrives, and a burst is stored in batches of a megabyte of it", async () => {
    const { writer, batches, cast } = recordingWith({ maxBytes: 16 * 1024 * 1024, tailBytes: 1024 * 1024 });
    const printed = floodText(3 * 1024 * 1024).slice(0, 3 * 1024 * 1024);
    print(writer, printed, 16 * 1024, startedAtMs);
    expect(batches).toEqual([]);
    await writer.flushed();
    expect(batches).toHaveLength(3);
    expect(outputOf(cast())).toBe(printed);
  });

  it("arriving while a batch is stored are stored together in the next", async () => {
    const batches: string[] = [];
    let release = () => {};
    const writer = new RecordingWriter({
      header,
      headBytes: 0,
      tail: undefined,
      ...smallCap,
      tailWriteIntervalMs: 1_000,
      append: (batch) => {
        batches.push(batch.text);
        return new Promise((resolve) => (release = resolve));
      },
      replaceTail: async () => {},
      onError: (error) => {
        throw error;
      },
    });
    writer.output(Buffer.from("first\r\n"), startedAtMs);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([eventLine(0, "o", "first\r\n")]);
    for (let line = 0; line < 5; line += 1) {
      writer.output(Buffer.from(`while stored ${line}\r\n`), startedAtMs + 1 + line);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(batches).toHaveLength(1);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await writer.flushed();
    expect(batches).toHaveLength(2);
    expect(batches[1]!.trimEnd().split("\n")).toHaveLength(5);
  });
});

describe("a flood far past the cap", () => {
  it("leaves the head as it was and keeps the newest output in the tail, counting what it let go of", async () => {
    const { writer, batches, cast } = recordingWith(smallCap);
    let printed = "the-beginning\r\n";
    writer.output(Buffer.from(printed), startedAtMs);
    // Past the head, then two chunks more: the head is full from here on.
    const head = floodText(smallCap.maxBytes, "head");
    print(writer, head, 16 * 1024, startedAtMs + 1);
    printed += head;
    await writer.flushed();
    const headBatches = [...batches];

    // 5 MB in 16 KiB chunks, each a millisecond after the one before, and then one last line.
    const flood = floodText(5 * 1024 * 1024);
    const floodTimes = print(writer, flood, 16 * 1024, startedAtMs + 1_000);
    const lastMs = floodTimes.at(-1)! + 1;
    writer.output(Buffer.from("the-end\r\n"), lastMs);
    printed += `${flood}the-end\r\n`;
    await writer.flushed();

    expect(batches).toEqual(headBatches);
    const recorded = cast();
    expectWellFormed(recorded, smallCap.maxBytes);
    const gap = expectGapAccountsFor(recorded, printed);
    expect(gap.before).toMatch(/^the-beginning\r\nhead 0 y+\r\n/);
    expect(gap.after).toMatch(/flood \d+ y+\r\nthe-end\r\n$/);
    expect(Buffer.byteLength(gap.tail)).toBeLessThanOrEqual(smallCap.tailBytes);
    expect(Buffer.byteLength(gap.tail)).toBeGreaterThan(smallCap.tailBytes - 2 * 1024);
    // The marker's times: the first output let go of was the rest of the head's flood (a second
    // before the flood), the last a chunk of the flood's end, kept in part or not at all.
    const [markerSeconds, , markerText] = eventsOf(headerLine(header) + gap.tail)[0]!;
    const marked = parseGapMarker(markerSeconds, markerText)!;
    expect(marked.fromSeconds).toBeLessThan(1);
    const afterStarts = Buffer.byteLength(printed) - Buffer.byteLength(gap.after);
    const floodStarts = Buffer.byteLength(printed) - Buffer.byteLength(`${flood}the-end\r\n`);
    const cutChunk = Math.floor((afterStarts - 1 - floodStarts) / (16 * 1024));
    expect(marked.toSeconds).toBe(secondsAt(floodTimes[cutChunk]!));
    const times = eventsOf(recorded).map(([time]) => time);
    expect(times.at(-1)).toBe(secondsAt(lastMs));
  });

  it("is stored with its tail by a flush when its lines outgrow the head though its bytes did not", async () => {
    const { writer, cast } = recordingWith(smallCap);
    // 20 KB of escapes, six bytes each in an event line (\u001b): the drain finds the head full.
    const printed = `${"\u001b".repeat(20_000)}the-end\r\n`;
    print(writer, printed, 1_000, startedAtMs);
    await writer.flushed();
    expectWellFormed(cast(), smallCap.maxBytes);
    expect(expectGapAccountsFor(cast(), printed).after.endsWith("\u001bthe-end\r\n")).toBe(true);
  });

  it("counts a character the tail cut in two as let go of, whole", async () => {
    const { writer, cast } = recordingWith(smallCap);
    // The tail holds 8 KiB of the flood's end: 3-byte characters, so it begins inside one.
    const printed = "€".repeat(100_000);
    print(writer, printed, 1_000, startedAtMs);
    await writer.flushed();
    expectGapAccountsFor(cast(), printed);
    expect(outputOf(cast())).not.toContain("\ufffd");
  });

  it("keeps whole characters and an exact count when its chunks cut them", async () => {
    const { writer, cast } = recordingWith(smallCap);
    const lines: string[] = [];
    for (let bytes = 0; bytes < 1024 * 1024;) {
      const line = `\u001b[3${lines.length % 8}mligne ${lines.length} é€😀 ${"x".repeat(lines.length % 50)}\u001b[0m\r\n`;
      lines.push(line);
      bytes += Buffer.byteLength(line);
    }
    const printed = lines.join("");
    print(writer, printed, 1_001, startedAtMs);
    await writer.flushed();
    const recorded = cast();
    expectWellFormed(recorded, smallCap.maxBytes);
    expectGapAccountsFor(recorded, printed);
    expect(outputOf(recorded)).not.toContain("\ufffd");
  });
});

describe("a tail taken over from storage", () => {
  const storedGap = { droppedBytes: 5_000, fromSeconds: 1, toSeconds: 2 };
  const stored: Stored = {
    headBytes: smallCap.maxBytes - smallCap.tailBytes,
    tail: gapMarkerLine(storedGap) + eventLine(3, "o", "kept-1\r\n") + eventLine(4, "o", "kept-ü\r\n"),
  };

  it("goes on after its events, with its gap as it was", async () => {
    const { writer, batches, cast } = recordingWith(smallCap, stored);
    writer.output(Buffer.from("new\r\n"), startedAtMs + 5_000);
    await writer.flushed();
    expect(batches).toEqual([]);
    expect(cast()).toBe(headerLine(header) + stored.tail + eventLine(5, "o", "new\r\n"));
  });

  it("counts on from its gap when it lets more go", async () => {
    const { writer, cast } = recordingWith(smallCap, stored);
    const flood = floodText(20 * 1024);
    print(writer, flood, 1_000, startedAtMs + 5_000);
    await writer.flushed();
    const gap = gapOf(cast())!;
    const kept = `kept-1\r\nkept-ü\r\n${flood}`;
    expect(kept.endsWith(gap.after)).toBe(true);
    expect(gap.dropped).toBe(5_000 + Buffer.byteLength(kept) - Buffer.byteLength(gap.after));
    const [marker] = eventsOf(headerLine(header) + gap.tail);
    expect(parseGapMarker(marker![0], marker![2])?.fromSeconds).toBe(1);
    expectWellFormed(cast(), smallCap.maxBytes);
  });
});
