import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CastPlayer, parseCast } from "./asciicast-player.ts";

const cast = parseCast(
  [
    JSON.stringify({ version: 2, width: 100, height: 30, timestamp: 1 }),
    JSON.stringify([0.5, "o", "one "]),
    JSON.stringify([1.0, "m", "a marker"]),
    JSON.stringify([1.5, "o", "two "]),
    JSON.stringify([601.5, "o", "three"]),
    "",
  ].join("\n"),
);

function playerWithScreen() {
  const screen = { text: "" };
  const player = new CastPlayer(cast, {
    write: (text) => (screen.text += text),
    reset: () => (screen.text = ""),
  });
  return { player, screen };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("parseCast", () => {
  it("reads whose session and which lab from Lab Console's header keys", () => {
    const header = { version: 2, width: 80, height: 24, timestamp: 1 };
    const lab_console = { sessionId: "linux-basics-x", owner: "alice", labId: "linux-basics" };
    expect(parseCast(JSON.stringify({ ...header, lab_console })).session).toEqual({
      owner: "alice",
      labId: "linux-basics",
    });
  });
});

describe("CastPlayer", () => {
  it("parses the size and output events, skipping markers", () => {
    expect(cast).toMatchObject({ width: 100, height: 30, duration: 601.5 });
    expect(cast.session).toBeUndefined();
    expect(cast.events.map((event) => event.text)).toEqual(["one ", "two ", "three"]);
  });

  it("plays in time at the chosen speed, shortening long idle gaps, and stops at the end", () => {
    const { player, screen } = playerWithScreen();
    player.setSpeed(2);
    player.play();
    vi.advanceTimersByTime(249);
    expect(screen.text).toBe("");
    vi.advanceTimersByTime(1);
    expect(screen.text).toBe("one ");
    vi.advanceTimersByTime(500);
    expect(screen.text).toBe("one two ");
    // Ten idle minutes play as two seconds (one at double speed).
    vi.advanceTimersByTime(1000);
    expect(screen.text).toBe("one two three");
    expect(player.snapshot).toMatchObject({ playing: false, position: 601.5 });
  });

  it("pauses, and seeks to the screen as it was at a moment", () => {
    const { player, screen } = playerWithScreen();
    player.play();
    vi.advanceTimersByTime(500);
    player.pause();
    vi.advanceTimersByTime(10_000);
    expect(screen.text).toBe("one ");
    player.seek(2);
    expect(screen.text).toBe("one two ");
    player.seek(0);
    expect(screen.text).toBe("");
    expect(player.snapshot.playing).toBe(false);
  });
});
