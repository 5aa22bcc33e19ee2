// The status a console shows its viewers: sent only when it changes; the idle notice only while connected.
import { describe, expect, it } from "vitest";
import type { ConsoleServerMessage } from "../../common/console-protocol.ts";
import { ConsoleStatus } from "./console-status.ts";
import { notices } from "./notices.ts";

function statusSeen() {
  const sent: ConsoleServerMessage[] = [];
  const status = new ConsoleStatus((message) => sent.push(message));
  const states = () =>
    sent.map((message) => (message.type === "status" ? [message.state, message.message] : []));
  return { status, states };
}

describe("a console's status", () => {
  it("is sent to the viewers only when it changes", () => {
    const { status, states } = statusSeen();
    status.set("connecting", null);
    status.set("connecting", notices.waitingForStart);
    status.set("connecting", notices.waitingForStart);
    status.set("connected", null);
    expect(states()).toEqual([
      ["connecting", notices.waitingForStart.message],
      ["connected", null],
    ]);
    expect(status.message()).toMatchObject({ type: "status", state: "connected", notice: null });
  });

  it("shows an idle notice while connected, once, and never over a waiting notice", () => {
    const { status, states } = statusSeen();
    const idle = notices.idleWarning("2026-12-07T20:30:00Z", "end");
    status.showIdle(idle);
    status.set("connected", null);
    status.showIdle(idle);
    status.showIdle({ ...idle });
    status.showIdle(null);
    expect(states()).toEqual([
      ["connected", null],
      ["connected", idle.message],
      ["connected", null],
    ]);
  });
});
