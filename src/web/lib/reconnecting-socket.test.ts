import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  ReconnectingSocket,
  socketUrl,
  type ReconnectRules,
  type SocketStatus,
} from "./reconnecting-socket.ts";
import { FakeWebSocket, installFakeWebSocket, latestSocket } from "./testing/fake-websocket.ts";

interface Recorded {
  socket: ReconnectingSocket;
  messages: (string | ArrayBuffer)[];
  statuses: SocketStatus[];
  opens: number;
}

function createSocket(rules: ReconnectRules = {}): Recorded {
  const recorded: Omit<Recorded, "socket"> = { messages: [], statuses: [], opens: 0 };
  const socket = new ReconnectingSocket("/api/things/1/stream?x=1", rules, {
    message: (data) => recorded.messages.push(data),
    open: () => (recorded.opens += 1),
    status: (status) => recorded.statuses.push(status),
  });
  return { socket, ...recorded };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
  installFakeWebSocket();
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

describe("socketUrl", () => {
  it("puts the path on the page's host with ws: or wss: to match the page", () => {
    expect(socketUrl("/api/a?b=1", { protocol: "http:", host: "localhost:5173" })).toBe(
      "ws://localhost:5173/api/a?b=1",
    );
    expect(socketUrl("/api/a", { protocol: "https:", host: "lab.example" })).toBe("wss://lab.example/api/a");
  });
});

describe("ReconnectingSocket", () => {
  it("opens one socket on the page's host and reports connecting, then open", () => {
    const { socket, statuses } = createSocket();
    socket.start();
    socket.start();
    expect(FakeWebSocket.created).toHaveLength(1);
    const first = latestSocket();
    expect(first.url).toBe("ws://lab.test/api/things/1/stream?x=1");
    expect(first.binaryType).toBe("arraybuffer");
    expect(socket.isOpen).toBe(false);
    first.serverOpen();
    expect(socket.isOpen).toBe(true);
    expect(statuses).toEqual([{ kind: "connecting" }, { kind: "open" }]);
  });

  it("reconnects with growing jittered delays up to the cap", () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    const { socket, statuses } = createSocket();
    socket.start();
    const waits: number[] = [];
    for (let attempt = 0; attempt < 7; attempt++) {
      latestSocket().serverClose(1006);
      const status = statuses.at(-1);
      if (status?.kind !== "reconnecting") throw new Error(`expected reconnecting, got ${status?.kind}`);
      const wait = status.retryAt - Date.now();
      waits.push(wait);
      const count = FakeWebSocket.created.length;
      vi.advanceTimersByTime(wait - 1);
      expect(FakeWebSocket.created).toHaveLength(count);
      vi.advanceTimersByTime(1);
      expect(FakeWebSocket.created).toHaveLength(count + 1);
    }
    // The lowest jitter is four fifths of 500, 1000, 2000 ... 15 000 ms.
    expect(waits).toEqual([400, 800, 1600, 3200, 6400, 12_000, 12_000]);
  });

  it("spreads the delay with jitter", () => {
    vi.spyOn(Math, "random").mockReturnValue(1);
    const { socket, statuses } = createSocket();
    socket.start();
    latestSocket().serverClose(1006);
    expect(statuses.at(-1)).toEqual({ kind: "reconnecting", retryAt: Date.now() + 600 });
  });

  it("keeps reporting reconnecting while the new socket opens, and open once it has", () => {
    const { socket, statuses } = createSocket();
    socket.start();
    latestSocket().serverOpen();
    latestSocket().serverClose(1006);
    vi.runOnlyPendingTimers();
    expect(FakeWebSocket.created).toHaveLength(2);
    expect(statuses.map((status) => status.kind)).toEqual(["connecting", "open", "reconnecting"]);
    latestSocket().serverOpen();
    expect(statuses.at(-1)).toEqual({ kind: "open" });
  });

  it("goes back to the shortest delay after resetBackoff", () => {
    vi.spyOn(Math, "random").mockReturnValue(0.5);
    const { socket, statuses } = createSocket();
    socket.start();
    latestSocket().serverClose(1006);
    vi.runOnlyPendingTimers();
    latestSocket().serverClose(1006);
    expect(statuses.at(-1)).toEqual({ kind: "reconnecting", retryAt: Date.now() + 1000 });
    vi.runOnlyPendingTimers();
    socket.resetBackoff();
    latestSocket().serverClose(1006);
    expect(statuses.at(-1)).toEqual({ kind: "reconnecting", retryAt: Date.now() + 500 });
  });

  it("stops for good on a final close code", () => {
    const { socket, statuses } = createSocket({ finalCloseCodes: [4403] });
    socket.start();
    latestSocket().serverOpen();
    latestSocket().serverClose(4403);
    expect(statuses.at(-1)).toEqual({ kind: "closed", code: 4403 });
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.created).toHaveLength(1);
    socket.reconnectNow();
    expect(FakeWebSocket.created).toHaveLength(1);
  });

  it("reconnects at once on an immediate close code", () => {
    const { socket, statuses } = createSocket({ immediateCloseCodes: [4008] });
    socket.start();
    latestSocket().serverOpen();
    latestSocket().serverClose(4008);
    expect(statuses.at(-1)).toEqual({ kind: "reconnecting", retryAt: Date.now() });
    vi.advanceTimersByTime(0);
    expect(FakeWebSocket.created).toHaveLength(2);
  });

  it("drop closes the socket and reconnects after its close, as after any drop", () => {
    const { socket, statuses } = createSocket();
    socket.start();
    latestSocket().serverOpen();
    socket.drop("cannot read it");
    expect(latestSocket().closedWith).toEqual({ code: 4000, reason: "cannot read it" });
    latestSocket().serverClose(4000, "cannot read it");
    expect(statuses.at(-1)?.kind).toBe("reconnecting");
    vi.advanceTimersByTime(15_000);
    expect(FakeWebSocket.created).toHaveLength(2);
  });

  it("does not replace a socket after finish, whatever code it closes with", () => {
    const { socket, statuses } = createSocket();
    socket.start();
    latestSocket().serverOpen();
    socket.finish();
    latestSocket().serverSend("last words");
    latestSocket().serverClose(1000);
    expect(statuses.at(-1)).toEqual({ kind: "closed", code: 1000 });
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.created).toHaveLength(1);
  });

  it("skips the wait on reconnectNow, and does nothing while a socket is opening", () => {
    const { socket } = createSocket();
    socket.start();
    socket.reconnectNow();
    expect(FakeWebSocket.created).toHaveLength(1);
    latestSocket().serverClose(1006);
    socket.reconnectNow();
    expect(FakeWebSocket.created).toHaveLength(2);
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.created).toHaveLength(2);
  });

  it("delivers text and binary frames of the current socket", () => {
    const { socket, messages } = createSocket();
    socket.start();
    latestSocket().serverOpen();
    latestSocket().serverSend("hello");
    latestSocket().serverSend(new Uint8Array([1, 2, 3]));
    expect(messages[0]).toBe("hello");
    expect(new Uint8Array(messages[1] as ArrayBuffer)).toEqual(new Uint8Array([1, 2, 3]));
  });

  it("ignores events from a replaced socket", () => {
    const { socket, messages, statuses } = createSocket();
    socket.start();
    const old = latestSocket();
    old.serverOpen();
    socket.stop();
    expect(old.closedWith).toEqual({ code: 1000, reason: "" });
    socket.start();
    const current = latestSocket();
    expect(current).not.toBe(old);
    const seen = statuses.length;

    old.serverSend("stale");
    old.serverOpen();
    old.serverClose(1006);
    vi.advanceTimersByTime(60_000);

    expect(messages).toEqual([]);
    expect(statuses).toHaveLength(seen);
    expect(FakeWebSocket.created).toHaveLength(2);
    current.serverOpen();
    current.serverSend("fresh");
    expect(messages).toEqual(["fresh"]);
  });

  it("tells message handlers which socket a frame came from", () => {
    const generations: number[] = [];
    const socket = new ReconnectingSocket(
      "/s",
      {},
      { message: (_data, generation) => generations.push(generation) },
    );
    socket.start();
    latestSocket().serverOpen();
    latestSocket().serverSend("a");
    latestSocket().serverClose(1006);
    vi.runOnlyPendingTimers();
    latestSocket().serverOpen();
    latestSocket().serverSend("b");
    const [first, second] = generations;
    expect(socket.isCurrent(first!)).toBe(false);
    expect(socket.isCurrent(second!)).toBe(true);
  });

  it("sends only while the socket is open", () => {
    const { socket } = createSocket();
    expect(socket.send("too early")).toBe(false);
    socket.start();
    expect(socket.send("still opening")).toBe(false);
    latestSocket().serverOpen();
    expect(socket.send("now")).toBe(true);
    expect(latestSocket().sent).toEqual(["now"]);
  });

  it("stop closes the socket and cancels a planned reconnect; start opens again", () => {
    const { socket, statuses } = createSocket();
    socket.start();
    latestSocket().serverClose(1006);
    socket.stop();
    expect(statuses.at(-1)).toEqual({ kind: "closed", code: null });
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.created).toHaveLength(1);
    socket.start();
    expect(FakeWebSocket.created).toHaveLength(2);
    expect(statuses.at(-1)).toEqual({ kind: "connecting" });
  });

  it("dispose closes the socket with its reason, and nothing reopens it", () => {
    const { socket, statuses } = createSocket();
    socket.start();
    latestSocket().serverOpen();
    const seen = statuses.length;
    socket.dispose("page left");
    expect(latestSocket().closedWith).toEqual({ code: 1000, reason: "page left" });
    latestSocket().serverClose(1000);
    socket.start();
    socket.reconnectNow();
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.created).toHaveLength(1);
    expect(statuses).toHaveLength(seen);
  });
});
