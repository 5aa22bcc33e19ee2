import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { parseScreenRecording, type ScreenFrame } from "../../../../common/screen-recording.ts";
import { ScreenPlayer } from "./screen-player.ts";

// Frames named by their PNG field: the player never decodes them, the canvas does.
const recording = parseScreenRecording(
  [
    JSON.stringify({
      version: 2,
      width: 720,
      height: 400,
      timestamp: 1,
      format: "lab-console-screen/1",
      lab_console: { sessionId: "desk-x", owner: "alice", labId: "desk", terminal: -1 },
    }),
    JSON.stringify([0, "k", 0, 0, 720, 400, "k0"]),
    JSON.stringify([1, "d", 9, 16, 9, 16, "d1"]),
    JSON.stringify([2, "d", 18, 16, 9, 16, "d2"]),
    JSON.stringify([30, "m", "recording gap: …"]),
    JSON.stringify([31, "k", 0, 0, 640, 480, "k31"]),
    JSON.stringify([31.5, "d", 0, 0, 8, 8, "d31.5"]),
    '[32, "d", 0, 0, 8, 8, "cut sho',
    "",
  ].join("\n"),
);

function playerWithScreen() {
  const drawn: { frames: string[]; fresh: boolean }[] = [];
  const player = new ScreenPlayer(recording, {
    draw: (frames: readonly ScreenFrame[], fresh: boolean) =>
      void drawn.push({ frames: frames.map((frame) => frame.png), fresh }),
  });
  return { player, drawn };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("parseScreenRecording", () => {
  it("reads the frames, whose session it is, and leaves markers and a line cut short out", () => {
    expect(recording.session).toEqual({ owner: "alice", labId: "desk" });
    expect(recording.frames.map((frame) => frame.png)).toEqual(["k0", "d1", "d2", "k31", "d31.5"]);
    expect(recording.duration).toBe(31.5);
  });

  it("refuses a console's asciicast", () => {
    expect(() => parseScreenRecording('{"version":2,"width":80,"height":24,"timestamp":1}\n')).toThrow();
  });
});

describe("ScreenPlayer", () => {
  it("seeks to the last keyframe before the time and the changes after it up to the time", () => {
    const { player, drawn } = playerWithScreen();
    player.seek(1.5);
    player.seek(2);
    player.seek(29);
    player.seek(31.7);
    player.seek(0);
    expect(drawn).toEqual([
      { frames: ["k0", "d1"], fresh: true },
      { frames: ["k0", "d1", "d2"], fresh: true },
      { frames: ["k0", "d1", "d2"], fresh: true },
      { frames: ["k31", "d31.5"], fresh: true },
      { frames: ["k0"], fresh: true },
    ]);
    expect(player.snapshot.position).toBe(0);
  });

  it("plays each frame at its time, long pauses shortened to 2 s, faster at a higher speed", () => {
    const { player, drawn } = playerWithScreen();
    player.seek(0);
    drawn.length = 0;
    player.play();
    vi.advanceTimersByTime(1_000);
    expect(drawn).toEqual([{ frames: ["d1"], fresh: false }]);
    player.setSpeed(2);
    vi.advanceTimersByTime(500);
    expect(drawn.at(-1)).toEqual({ frames: ["d2"], fresh: false });
    // 29 s to the next keyframe play as 2 s, at 2x as 1 s.
    vi.advanceTimersByTime(999);
    expect(drawn).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(drawn.at(-1)).toEqual({ frames: ["k31"], fresh: true });
    vi.advanceTimersByTime(250);
    expect(drawn.at(-1)).toEqual({ frames: ["d31.5"], fresh: false });
    expect(player.snapshot).toEqual({ playing: false, position: 31.5, speed: 2 });
  });

  it("plays on from where it was sought to, and from the start once it reached the end", () => {
    const { player, drawn } = playerWithScreen();
    player.seek(1.5);
    player.play();
    vi.advanceTimersByTime(500);
    expect(drawn.at(-1)).toEqual({ frames: ["d2"], fresh: false });
    player.seek(40);
    expect(player.snapshot.playing).toBe(false);
    drawn.length = 0;
    player.play();
    expect(drawn[0]).toEqual({ frames: ["k0"], fresh: true });
    player.pause();
  });
});
