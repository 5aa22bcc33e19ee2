// The screen recorder: changes coalesced to a few writes a second, keyframes when they are due, the
// size cap kept with a tail that always opens with a keyframe, and a recording that draws back the
// screen it recorded, at its end and at any time in between.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { text } from "node:stream/consumers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { eventually } from "../../common/testing/patience.ts";
import type { Area } from "../../common/png.ts";
import { FileRecordingStorage } from "./file-recording-storage.ts";
import { RecordingStore } from "./recording-store.ts";
import { ScreenRecordingWriter } from "./screen-recording-writer.ts";
import { CoalescingScreenRecorder } from "./screen-recorder.ts";
import { aHeader } from "./testing/storage-contract.ts";
import { anImage, paint, rgbAt, screenAt, screenEventsOf, scribble } from "./testing/screen-recording.ts";
import type { RecordingBatch } from "./recording-storage.ts";

describe("coalescing", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function fakeWriter(needsKeyframe = () => false, accepts = () => true) {
    const pushed: { kind: string; area: Area }[] = [];
    let first = true;
    return {
      pushed,
      needsKeyframe: () => first || needsKeyframe(),
      push: (kind: "k" | "d", area: Area) => {
        if (kind === "d" && !accepts()) return false;
        if (kind === "k") first = false;
        pushed.push({ kind, area });
        return true;
      },
    };
  }

  it("writes a keyframe first, then at most one write per interval, however many updates came", () => {
    vi.useFakeTimers();
    const recorder = new CoalescingScreenRecorder({ intervalMs: 250 });
    const writer = fakeWriter();
    const image = anImage();
    recorder.update(image, [paint(image, { x: 0, y: 0, width: 4, height: 4 }, [255, 0, 0])]);
    recorder.attach(writer);
    vi.advanceTimersByTime(0);
    expect(writer.pushed).toEqual([{ kind: "k", area: { x: 0, y: 0, width: 64, height: 32 } }]);

    for (let step = 0; step < 20; step += 1) {
      recorder.update(image, [paint(image, { x: 10, y: 10, width: 2, height: 2 }, [step, 0, 0])]);
      vi.advanceTimersByTime(10);
    }
    // 200 ms of updates: none written before the interval since the keyframe is over.
    expect(writer.pushed).toHaveLength(1);
    vi.advanceTimersByTime(50);
    expect(writer.pushed).toEqual([
      { kind: "k", area: { x: 0, y: 0, width: 64, height: 32 } },
      { kind: "d", area: { x: 10, y: 10, width: 2, height: 2 } },
    ]);
    // Nothing changed: nothing written.
    vi.advanceTimersByTime(1_000);
    expect(writer.pushed).toHaveLength(2);
  });

  it("writes a keyframe when the screen's size changes, when the writer asks, and when it refuses a change", () => {
    vi.useFakeTimers();
    const recorder = new CoalescingScreenRecorder({ intervalMs: 100 });
    let wantKeyframe = false;
    let accept = true;
    const writer = fakeWriter(
      () => wantKeyframe,
      () => accept,
    );
    recorder.attach(writer);
    const small = anImage(32, 16);
    recorder.update(small, [{ x: 0, y: 0, width: 32, height: 16 }]);
    vi.advanceTimersByTime(100);
    const bigger = anImage(48, 24);
    recorder.update(bigger, [{ x: 0, y: 0, width: 2, height: 2 }]);
    vi.advanceTimersByTime(100);
    wantKeyframe = true;
    recorder.update(bigger, [{ x: 1, y: 1, width: 1, height: 1 }]);
    vi.advanceTimersByTime(100);
    wantKeyframe = false;
    accept = false;
    recorder.update(bigger, [{ x: 1, y: 1, width: 1, height: 1 }]);
    vi.advanceTimersByTime(100);
    expect(writer.pushed.map((push) => `${push.kind} ${push.area.width}x${push.area.height}`)).toEqual([
      "k 32x16",
      "k 48x24",
      "k 48x24",
      "k 48x24",
    ]);
  });
});

describe("the writer", () => {
  function writerWith(options: { maxBytes?: number; tailBytes?: number; keyframeEveryBytes?: number }) {
    const head: string[] = [];
    let tail = "";
    const writer = new ScreenRecordingWriter({
      append: async (batch: RecordingBatch) => void head.push(batch.text),
      replaceTail: async (batch: RecordingBatch) => {
        tail = batch.text;
      },
      header: { ...aHeader("s1"), timestamp: 0 },
      headBytes: 0,
      tail: undefined,
      maxBytes: options.maxBytes ?? 1024 * 1024,
      tailBytes: options.tailBytes ?? 64 * 1024,
      tailWriteIntervalMs: 0,
      keyframeEveryBytes: options.keyframeEveryBytes ?? 1024 * 1024,
      keyframeEveryMs: 30_000,
      onError: (error) => {
        throw error;
      },
    });
    return { writer, head: () => head.join(""), tail: () => tail };
  }
  const whole = { x: 0, y: 0, width: 8, height: 8 };
  const png = (bytes: number) => Buffer.alloc(bytes, 7);

  it("refuses a change before its first keyframe, and asks for keyframes by time and by bytes", async () => {
    const { writer, head } = writerWith({ keyframeEveryBytes: 3_000 });
    expect(writer.needsKeyframe(0)).toBe(true);
    expect(writer.push("d", whole, png(10), 0)).toBe(false);
    expect(writer.push("k", whole, png(10), 1_000)).toBe(true);
    expect(writer.needsKeyframe(2_000)).toBe(false);
    expect(writer.needsKeyframe(31_000)).toBe(true);
    writer.push("d", whole, png(1_000), 2_000);
    expect(writer.needsKeyframe(2_000)).toBe(false);
    writer.push("d", whole, png(1_500), 2_000);
    // Base64 makes 2,500 bytes about 3,340: past the 3,000 a keyframe is due.
    expect(writer.needsKeyframe(2_000)).toBe(true);
    await writer.flushed();
    expect(screenEventsOf(`{}\n${head()}`).map((event) => event[1])).toEqual(["k", "d", "d"]);
  });

  it("keeps within the cap: once the head is full, whole groups roll through a tail that opens with a marker and a keyframe", async () => {
    const maxBytes = 64 * 1024;
    const { writer, head, tail } = writerWith({ maxBytes, tailBytes: 16 * 1024 });
    let at = 0;
    let refused = 0;
    for (let group = 0; group < 40; group += 1) {
      at += 1_000;
      writer.push("k", whole, png(1_500), at);
      for (let change = 0; change < 3; change += 1) {
        at += 100;
        if (!writer.push("d", whole, png(300), at)) {
          refused += 1;
          writer.push("k", whole, png(1_500), at);
        }
      }
    }
    await writer.flushed();
    // The one change that met the full head was refused and taken as a keyframe instead.
    expect(refused).toBe(1);
    const recording = head() + tail();
    expect(Buffer.byteLength(recording)).toBeLessThanOrEqual(maxBytes);
    const tailEvents = screenEventsOf(`{}\n${tail()}`);
    expect(tailEvents[0]?.[1]).toBe("m");
    expect(tailEvents[0]?.[2]).toMatch(
      /^recording gap: \d+ bytes of screen changes .* not kept \(size limit\)/,
    );
    expect(tailEvents[1]?.[1]).toBe("k");
    // The last change is kept, and times never go back.
    expect(tailEvents.at(-1)?.[0]).toBe(at / 1000);
    const times = screenEventsOf(recording).map((event) => event[0] as number);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });
});

describe("a screen recording through the store", () => {
  let dir: string;
  let warnings: unknown[];
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "screen-recordings-"));
    warnings = [];
  });
  afterEach(async () => {
    expect(warnings).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  function aStore(maxBytes = 16 * 1024 * 1024, tailBytes?: number) {
    return new RecordingStore({
      storage: new FileRecordingStorage(dir),
      maxBytes,
      tailBytes,
      retentionMs: 86_400_000,
      sessionOf: async () => ({ labId: "desktop-lab", section: "a" }),
      log: { warn: (details: unknown) => void warnings.push(details) },
      screen: { intervalMs: 20 },
    });
  }

  async function recordingOf(store: RecordingStore, sessionId: string): Promise<string> {
    const found = await store.download(sessionId, -1, () => true);
    return found ? text(found.body) : "";
  }

  it("is listed beside the consoles' as the session's screen, and draws back the screen at its end and in between", async () => {
    const store = aStore();
    const recorder = store.screenRecorderFor({ id: "s-screen", owner: "alice" });
    const image = anImage();
    recorder.update(image, [paint(image, { x: 0, y: 0, width: 64, height: 32 }, [0, 0, 80])]);
    await eventually(
      () => store.find("s-screen--screen"),
      (found) => found !== undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    recorder.update(image, [paint(image, { x: 8, y: 8, width: 4, height: 4 }, [255, 255, 0])]);
    await recorder.close();

    const [summary] = await store.list({}, () => true);
    expect(summary).toMatchObject({
      sessionId: "s-screen",
      terminal: -1,
      owner: "alice",
      labId: "desktop-lab",
    });
    const recording = await recordingOf(store, "s-screen");
    expect(JSON.parse(recording.split("\n")[0]!)).toMatchObject({
      format: "lab-console-screen/1",
      width: 64,
      height: 32,
      lab_console: {
        sessionId: "s-screen",
        owner: "alice",
        labId: "desktop-lab",
        section: "a",
        terminal: -1,
      },
    });
    const events = screenEventsOf(recording);
    expect(events.map((event) => event[1])).toEqual(["k", "d"]);
    const end = screenAt(recording);
    expect(rgbAt(end, 9, 9)).toEqual([255, 255, 0]);
    expect(rgbAt(end, 0, 0)).toEqual([0, 0, 80]);
    // Before the change: the keyframe alone.
    expect(rgbAt(screenAt(recording, (events[1]![0] as number) - 0.001), 9, 9)).toEqual([0, 0, 80]);
  });

  it("never grows past the cap: a screen changing all over keeps its start and its last screen", async () => {
    const maxBytes = 256 * 1024;
    const store = aStore(maxBytes, 64 * 1024);
    const recorder = store.screenRecorderFor({ id: "s-busy", owner: "alice" });
    const image = anImage(96, 64);
    for (let step = 0; step < 60; step += 1) {
      recorder.update(image, [scribble(image, step)]);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    recorder.update(image, [paint(image, { x: 0, y: 0, width: 96, height: 64 }, [1, 2, 3])]);
    await recorder.close();
    const recording = await recordingOf(store, "s-busy");
    expect(Buffer.byteLength(recording)).toBeLessThanOrEqual(maxBytes);
    expect(recording).toContain("recording gap:");
    expect(rgbAt(screenAt(recording), 50, 50)).toEqual([1, 2, 3]);
  });
});
