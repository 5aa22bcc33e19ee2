import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeWebSocket, installFakeWebSocket, latestSocket } from "../../../lib/testing/fake-websocket.ts";
import { channelState, type ScreenChannel } from "./screen-channel.ts";
import { ScreenConnection } from "./screen-connection.ts";

const keyboard = (canType: boolean) =>
  JSON.stringify({
    type: "keyboard",
    holder: "alice",
    holderIsOwner: true,
    canType,
    canTake: !canType,
    canRelease: false,
  });
const viewers = (holder: string, ...people: [string, string][]) =>
  JSON.stringify({
    type: "viewers",
    holder,
    viewers: people.map(([username, role]) => ({
      username,
      role,
      mode: username === holder ? "type" : "observe",
    })),
  });

function aConnection() {
  const connection = new ScreenConnection("/api/sessions/s1/vnc");
  const channels: ScreenChannel[] = [];
  connection.onChannel((channel) => channels.push(channel));
  connection.start();
  return { connection, channels };
}

/** What noVNC would read from a channel: its binary frames, as byte lists. */
function readBy(channel: ScreenChannel): number[][] {
  const frames: number[][] = [];
  channel.onmessage = (event) => frames.push([...new Uint8Array(event.data)]);
  return frames;
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
  installFakeWebSocket();
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("ScreenConnection", () => {
  it("opens the screen's websocket on the page's host", () => {
    aConnection();
    expect(latestSocket().url).toBe("ws://lab.test/api/sessions/s1/vnc");
  });

  it("hands each socket's RFB bytes to its channel and reads the JSON messages itself", () => {
    const { connection, channels } = aConnection();
    const socket = latestSocket();
    socket.serverOpen();
    expect(channels).toHaveLength(1);
    const frames = readBy(channels[0]!);
    socket.serverSend(new TextEncoder().encode("RFB 003.008\n"));
    socket.serverSend(JSON.stringify({ type: "status", state: "connected", message: null }));
    socket.serverSend(keyboard(true));
    socket.serverSend(new Uint8Array([1, 2, 3]));
    expect(frames).toEqual([[...new TextEncoder().encode("RFB 003.008\n")], [1, 2, 3]]);
    expect(connection.getState().status).toEqual({ kind: "connected" });
    expect(connection.getState().keyboard?.canType).toBe(true);
  });

  it("sends noVNC's bytes as binary frames, and take and give back as JSON", () => {
    const { connection, channels } = aConnection();
    const socket = latestSocket();
    socket.serverOpen();
    channels[0]!.send(new Uint8Array([3, 0, 0, 0]));
    connection.takeKeyboard();
    connection.releaseKeyboard();
    expect(socket.sentBinary().map((each) => [...each])).toEqual([[3, 0, 0, 0]]);
    expect(socket.sentJson()).toEqual([{ type: "take-keyboard" }, { type: "release-keyboard" }]);
  });

  it("ignores text frames that are not its messages", () => {
    const { connection } = aConnection();
    const socket = latestSocket();
    socket.serverOpen();
    const before = connection.getState();
    socket.serverSend("not json");
    socket.serverSend(JSON.stringify({ type: "replay-begin", fresh: true }));
    expect(connection.getState()).toBe(before);
  });

  it("closes the channel when the socket drops, and gives a new socket a new channel", () => {
    const { connection, channels } = aConnection();
    latestSocket().serverOpen();
    const closes: number[] = [];
    channels[0]!.onclose = (event) => closes.push(event.code);
    latestSocket().serverClose(1006);
    expect(closes).toEqual([1006]);
    expect(connection.getState().status).toMatchObject({ kind: "reconnecting", retryAt: expect.any(Number) });
    vi.advanceTimersByTime(15_000);
    expect(FakeWebSocket.created).toHaveLength(2);
    latestSocket().serverOpen();
    expect(channels).toHaveLength(2);
    const frames = readBy(channels[1]!);
    latestSocket().serverSend(new Uint8Array([7]));
    expect(frames).toEqual([[7]]);
    expect(channels[0]!.readyState).toBe(channelState.closed);
  });

  it("reconnects when noVNC gives up on the stream", () => {
    const { channels } = aConnection();
    latestSocket().serverOpen();
    channels[0]!.close();
    expect(latestSocket().closedWith?.code).toBe(4000);
    latestSocket().serverClose(4000);
    vi.advanceTimersByTime(15_000);
    expect(FakeWebSocket.created).toHaveLength(2);
  });

  it("does not reconnect after the BFF said the screen ended", () => {
    const { connection } = aConnection();
    latestSocket().serverOpen();
    latestSocket().serverSend(JSON.stringify({ type: "ended", reason: "This session has ended." }));
    latestSocket().serverClose(1000);
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.created).toHaveLength(1);
    expect(connection.getState().status).toEqual({ kind: "ended", reason: "This session has ended." });
  });

  it("keeps who watches, and says when staff take the keyboard", () => {
    const { connection } = aConnection();
    latestSocket().serverOpen();
    latestSocket().serverSend(viewers("alice", ["alice", "student"], ["tara", "ta"]));
    expect(connection.getState().keyboardNews).toBeNull();
    latestSocket().serverSend(viewers("tara", ["alice", "student"], ["tara", "ta"]));
    expect(connection.getState().viewers?.holder).toBe("tara");
    expect(connection.getState().keyboardNews).toEqual({ kind: "taken", username: "tara", role: "ta" });
  });

  it("sends a paste only while this viewer holds the keyboard, and shows the BFF's outcome", () => {
    const { connection } = aConnection();
    const socket = latestSocket();
    socket.serverOpen();
    socket.serverSend(keyboard(false));
    expect(connection.paste("echo hi\n")).toBe(false);
    socket.serverSend(keyboard(true));
    expect(connection.paste("")).toBe(false);
    expect(connection.paste("x".repeat(2001))).toBe(false);
    expect(connection.paste("echo hi\n")).toBe(true);
    expect(connection.getState().paste).toEqual({ kind: "typing", characters: 8 });
    // One at a time: the BFF would refuse a second as busy.
    expect(connection.paste("more")).toBe(false);
    expect(socket.sentJson()).toEqual([{ type: "paste", text: "echo hi\n" }]);
    socket.serverSend(JSON.stringify({ type: "paste", outcome: "typed", characters: 8 }));
    expect(connection.getState().paste).toEqual({ kind: "typed", characters: 8 });
    connection.paste("é");
    socket.serverSend(
      JSON.stringify({ type: "paste", outcome: "refused", characters: 0, reason: "unsupported" }),
    );
    expect(connection.getState().paste).toEqual({ kind: "refused", reason: "unsupported" });
    connection.clearPaste();
    expect(connection.getState().paste).toEqual({ kind: "idle" });
  });

  it("says a paste was lost when the socket dropped before the BFF answered", () => {
    const { connection } = aConnection();
    latestSocket().serverOpen();
    latestSocket().serverSend(keyboard(true));
    connection.paste("hello");
    latestSocket().serverClose(1006);
    expect(connection.getState().paste).toEqual({ kind: "refused", reason: "lost" });
  });

  it("closes the socket and the channel on dispose, and opens nothing more", () => {
    const { connection, channels } = aConnection();
    const socket = latestSocket();
    socket.serverOpen();
    connection.dispose();
    expect(socket.closedWith).toEqual({ code: 1000, reason: "screen closed" });
    expect(channels[0]!.readyState).toBe(channelState.closed);
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.created).toHaveLength(1);
  });
});
