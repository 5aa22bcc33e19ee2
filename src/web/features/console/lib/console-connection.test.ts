import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  consoleAckBytes,
  consoleCloseCodes,
  type ConsoleServerMessage,
} from "../../../../common/console-protocol.ts";
import { FakeWebSocket, installFakeWebSocket, latestSocket } from "../../../lib/testing/fake-websocket.ts";
import { ConsoleConnection, type TerminalSink } from "./console-connection.ts";

/** A terminal that parses only when the test says so. */
class FakeSink implements TerminalSink {
  readonly pending: { bytes: Uint8Array; written: () => void }[] = [];
  readonly events: string[] = [];

  write(bytes: Uint8Array, written: () => void): void {
    this.pending.push({ bytes, written });
    this.events.push(`write ${bytes.length}`);
  }

  clear(): void {
    this.events.push("clear");
  }

  notice(notice: "outputLost"): void {
    this.events.push(notice);
  }

  /** Parses the oldest pending write. */
  parseNext(): void {
    const next = this.pending.shift();
    if (!next) throw new Error("nothing was written");
    next.written();
  }
}

function control(socket: FakeWebSocket, message: ConsoleServerMessage): void {
  socket.serverSend(JSON.stringify(message));
}

const typist: ConsoleServerMessage = {
  type: "keyboard",
  holder: "ada",
  holderIsOwner: true,
  canType: true,
  canTake: false,
  canRelease: true,
};

function connect(): { connection: ConsoleConnection; sink: FakeSink; socket: FakeWebSocket } {
  const sink = new FakeSink();
  const connection = new ConsoleConnection("/api/sessions/s%201/console?mode=observe", sink);
  connection.start();
  const socket = latestSocket();
  socket.serverOpen();
  return { connection, sink, socket };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 5_000_000 });
  vi.spyOn(Math, "random").mockReturnValue(0.5);
  installFakeWebSocket({ protocol: "https:", host: "lab.example" });
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

describe("ConsoleConnection", () => {
  it("opens the console's socket on the page's host", () => {
    connect();
    expect(latestSocket().url).toBe("wss://lab.example/api/sessions/s%201/console?mode=observe");
  });

  it("acks output only once the terminal has written it", () => {
    const { sink, socket } = connect();
    socket.serverSend(new Uint8Array(1000));
    expect(sink.events).toEqual(["write 1000"]);
    expect(socket.sentJson()).toEqual([]);
    sink.parseNext();
    expect(socket.sentJson()).toEqual([{ type: "ack", bytes: 1000 }]);
  });

  it("holds small acks while more output is being written, and acks in one go", () => {
    const { sink, socket } = connect();
    socket.serverSend(new Uint8Array(100));
    socket.serverSend(new Uint8Array(200));
    sink.parseNext();
    expect(socket.sentJson()).toEqual([]);
    sink.parseNext();
    expect(socket.sentJson()).toEqual([{ type: "ack", bytes: 300 }]);
  });

  it("acks as soon as a full ack's worth is written, even with more to write", () => {
    const { sink, socket } = connect();
    const frame = consoleAckBytes / 2;
    for (let index = 0; index < 3; index++) socket.serverSend(new Uint8Array(frame));
    sink.parseNext();
    expect(socket.sentJson()).toEqual([]);
    sink.parseNext();
    expect(socket.sentJson()).toEqual([{ type: "ack", bytes: consoleAckBytes }]);
    sink.parseNext();
    expect(socket.sentJson()).toEqual([
      { type: "ack", bytes: consoleAckBytes },
      { type: "ack", bytes: frame },
    ]);
  });

  it("never acks an old socket's output on the new socket", () => {
    const { sink, socket } = connect();
    socket.serverSend(new Uint8Array(500));
    socket.serverClose(1006);
    vi.runOnlyPendingTimers();
    const next = latestSocket();
    next.serverOpen();
    sink.parseNext();
    expect(next.sentJson()).toEqual([]);
    next.serverSend(new Uint8Array(10));
    sink.parseNext();
    expect(next.sentJson()).toEqual([{ type: "ack", bytes: 10 }]);
  });

  it("sends keystrokes as binary frames of at most 16 KiB", () => {
    const { connection, socket } = connect();
    control(socket, typist);
    const text = "é".repeat(20 * 1024);
    connection.sendText(text);
    const frames = socket.sentBinary();
    expect(frames.map((frame) => frame.length)).toEqual([16 * 1024, 16 * 1024, 8 * 1024]);
    expect(new TextDecoder().decode(concat(frames))).toBe(text);
  });

  it("sends raw bytes from the terminal one byte per char", () => {
    const { connection, socket } = connect();
    control(socket, typist);
    connection.sendBinaryString("\x1b[M\xff");
    expect(socket.sentBinary()).toEqual([new Uint8Array([0x1b, 0x5b, 0x4d, 0xff])]);
  });

  it("drops keystrokes while this viewer may not type", () => {
    const { connection, socket } = connect();
    connection.sendText("ls\r");
    control(socket, { ...typist, canType: false });
    connection.sendText("ls\r");
    expect(socket.sent).toEqual([]);
    expect(connection.getState().keyboard).toEqual({
      holder: "ada",
      holderIsOwner: true,
      canType: false,
      canTake: false,
      canRelease: true,
    });
  });

  it("sends the keyboard and fit controls as JSON", () => {
    const { connection, socket } = connect();
    connection.takeKeyboard();
    connection.releaseKeyboard();
    connection.fitGuest(120, 40);
    expect(socket.sentJson()).toEqual([
      { type: "take-keyboard" },
      { type: "release-keyboard" },
      { type: "fit-guest", cols: 120, rows: 40 },
    ]);
  });

  it("goes through connecting, connected, reconnecting and ended", () => {
    const sink = new FakeSink();
    const connection = new ConsoleConnection("/api/sessions/s1/console", sink);
    const statuses: unknown[] = [];
    connection.subscribe(() => statuses.push(connection.getState().status));
    expect(connection.getState().status).toEqual({ kind: "connecting", message: null });
    connection.start();
    const socket = latestSocket();
    socket.serverOpen();
    control(socket, { type: "status", state: "connecting", message: "Waiting for the VM to start" });
    control(socket, { type: "status", state: "connected", message: null });
    control(socket, { type: "status", state: "reconnecting", message: "The VM's console dropped" });
    control(socket, { type: "status", state: "connected", message: null });
    socket.serverClose(1006);
    vi.runOnlyPendingTimers();
    latestSocket().serverOpen();
    control(latestSocket(), { type: "ended", reason: "The session ended." });
    latestSocket().serverClose(1000);
    vi.advanceTimersByTime(60_000);

    expect(statuses).toEqual([
      { kind: "connecting", message: "Waiting for the VM to start" },
      { kind: "connected" },
      { kind: "reconnecting", message: "The VM's console dropped", retryAt: null },
      { kind: "connected" },
      { kind: "reconnecting", message: null, retryAt: 5_000_000 + 500 },
      { kind: "ended", reason: "The session ended." },
    ]);
    expect(FakeWebSocket.created).toHaveLength(2);
    connection.reconnectNow();
    expect(FakeWebSocket.created).toHaveLength(2);
  });

  it("reconnects at once when the BFF drops a viewer for being too slow", () => {
    const { connection, socket } = connect();
    socket.serverClose(consoleCloseCodes.tooSlow);
    expect(connection.getState().status).toEqual({
      kind: "reconnecting",
      message: null,
      retryAt: Date.now(),
    });
    vi.advanceTimersByTime(0);
    expect(FakeWebSocket.created).toHaveLength(2);
  });

  it("backs off from the shortest delay again only once the BFF says the console is connected", () => {
    const { connection, socket } = connect();
    socket.serverClose(1006);
    vi.runOnlyPendingTimers();
    latestSocket().serverOpen();
    latestSocket().serverClose(1006);
    expect(connection.getState().status).toEqual({
      kind: "reconnecting",
      message: null,
      retryAt: Date.now() + 1000,
    });
    vi.runOnlyPendingTimers();
    latestSocket().serverOpen();
    control(latestSocket(), { type: "status", state: "connected", message: null });
    latestSocket().serverClose(1006);
    expect(connection.getState().status).toEqual({
      kind: "reconnecting",
      message: null,
      retryAt: Date.now() + 500,
    });
  });

  it("reconnects without waiting on reconnectNow", () => {
    const { connection, socket } = connect();
    socket.serverClose(1006);
    connection.reconnectNow();
    expect(FakeWebSocket.created).toHaveLength(2);
  });

  it("clears the terminal before a replay, and marks lost output when the BFF has none", () => {
    const { sink, socket } = connect();
    control(socket, { type: "replay-begin", fresh: true });
    expect(sink.events).toEqual([]);
    socket.serverSend(new Uint8Array(3));
    control(socket, { type: "replay-end" });
    socket.serverClose(1006);
    vi.runOnlyPendingTimers();
    latestSocket().serverOpen();
    control(latestSocket(), { type: "replay-begin", fresh: false });
    control(latestSocket(), { type: "replay-begin", fresh: true });
    expect(sink.events).toEqual(["write 3", "clear", "outputLost"]);
  });

  it("knows a blank screen and why from the replay, until output after it arrives", () => {
    const { connection, socket } = connect();
    control(socket, { type: "replay-begin", fresh: true });
    control(socket, { type: "replay-end", blank: "log-off" });
    expect(connection.getState().blankScreen).toBe("log-off");
    socket.serverSend(new TextEncoder().encode("$ "));
    expect(connection.getState().blankScreen).toBeNull();

    // A later replay that is not blank (a reconnect, after output) has no reason to show.
    control(socket, { type: "replay-begin", fresh: false });
    socket.serverSend(new TextEncoder().encode("$ "));
    control(socket, { type: "replay-end" });
    expect(connection.getState().blankScreen).toBeNull();
    // A blank screen of the BFF's (it restarted) over the screen kept here is not blank.
    control(socket, { type: "replay-begin", fresh: true });
    control(socket, { type: "replay-end", blank: "quiet" });
    expect(connection.getState().blankScreen).toBeNull();
  });

  it("keeps the guest's size", () => {
    const { connection, socket } = connect();
    control(socket, { type: "guest-size", cols: 100, rows: 30 });
    expect(connection.getState().guestSize).toEqual({ cols: 100, rows: 30 });
  });

  it("keeps who is here, tells when staff take or give back the keyboard, and shows a failed fit", () => {
    const { connection, socket } = connect();
    const alice = { username: "alice", role: "student", mode: "type" } as const;
    const tara = { username: "tara", role: "ta", mode: "observe" } as const;
    control(socket, { type: "viewers", viewers: [alice, tara], holder: "alice" });
    expect(connection.getState()).toMatchObject({
      viewers: { viewers: [alice, tara], holder: "alice" },
      keyboardNews: null,
    });
    control(socket, {
      type: "viewers",
      viewers: [
        { ...alice, mode: "observe" },
        { ...tara, mode: "type" },
      ],
      holder: "tara",
    });
    expect(connection.getState().keyboardNews).toEqual({ kind: "taken", username: "tara", role: "ta" });

    connection.fitGuest(120, 40);
    control(socket, { type: "fit-failed", code: "agent-unreachable", cols: 120, rows: 40 });
    expect(connection.getState().fitFailure).toBe("agent-unreachable");
    control(socket, { type: "guest-size", cols: 100, rows: 30 });
    expect(connection.getState().fitFailure).toBeNull();
  });

  it("ignores text frames that are not its protocol", () => {
    const { connection, socket } = connect();
    const before = connection.getState();
    socket.serverSend("{not json");
    socket.serverSend(JSON.stringify({ type: "launch-missiles" }));
    expect(connection.getState()).toBe(before);
  });

  it("closes the socket on dispose and does not reconnect", () => {
    const { connection, socket } = connect();
    const listener = vi.fn();
    connection.subscribe(listener);
    connection.dispose();
    expect(socket.closedWith).toEqual({ code: 1000, reason: "console closed" });
    socket.serverClose(1000);
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.created).toHaveLength(1);
    expect(listener).not.toHaveBeenCalled();
  });
});

function concat(chunks: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.length;
  }
  return all;
}
