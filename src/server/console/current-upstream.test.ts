// The console's line to the VM as it comes and goes, with a line that only records what it is asked.
import { describe, expect, it } from "vitest";
import { CurrentUpstream } from "./current-upstream.ts";
import type { UpstreamEvents, UpstreamLine } from "./upstream.ts";

function recordingLine(): UpstreamLine & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    listen: () => calls.push("listen"),
    send: (bytes) => calls.push(`send ${Buffer.from(bytes).toString()}`),
    pause: () => calls.push("pause"),
    resume: () => calls.push("resume"),
    heartbeat: () => calls.push("heartbeat"),
    close: () => calls.push("close"),
  };
}

const events: UpstreamEvents = { output: () => undefined, lost: () => undefined, ended: () => undefined };

describe("the current line to the VM", () => {
  it("holds keys typed while it is down and sends them first once it is open", () => {
    const upstream = new CurrentUpstream(4);
    expect(upstream.send(Buffer.from("ab"))).toBe(true);
    expect(upstream.send(Buffer.from("cde"))).toBe(false);
    const line = recordingLine();
    upstream.attach(line, events);
    expect(upstream.send(Buffer.from("f"))).toBe(true);
    expect(line.calls).toEqual(["listen", "send ab", "send f"]);
  });

  it("pauses only above the high watermark, and stays paused on the next line until resumed", () => {
    const upstream = new CurrentUpstream(4);
    const first = recordingLine();
    upstream.attach(first, events);
    upstream.pauseAbove(10, 10);
    expect(upstream.isPaused).toBe(false);
    upstream.pauseAbove(11, 10);
    upstream.pauseAbove(12, 10);
    expect(first.calls).toEqual(["listen", "pause"]);
    upstream.lost();
    expect(upstream.connected).toBe(false);
    const second = recordingLine();
    upstream.attach(second, events);
    upstream.resume();
    expect(upstream.isPaused).toBe(false);
    expect(second.calls).toEqual(["listen", "pause", "resume"]);
  });
});
