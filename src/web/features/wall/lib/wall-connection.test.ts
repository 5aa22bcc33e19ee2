import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type {
  WallScreen,
  WallSearch,
  WallServerMessage,
  WallSession,
} from "../../../../common/wall-protocol.ts";
import { FakeWebSocket, installFakeWebSocket, latestSocket } from "../../../lib/testing/fake-websocket.ts";
import { noSearch, WallConnection, type PageVisibility } from "./wall-connection.ts";

/** A tab whose visibility the test switches, as Page Visibility would. */
class FakePage extends EventTarget implements PageVisibility {
  visibilityState: DocumentVisibilityState = "visible";

  show(state: DocumentVisibilityState): void {
    this.visibilityState = state;
    this.dispatchEvent(new Event("visibilitychange"));
  }
}

function session(overrides: Partial<WallSession> = {}): WallSession {
  return {
    sessionId: "s1",
    owner: "ada",
    section: null,
    status: "running",
    expiresAt: "2026-12-01T20:00:00.000Z",
    help: null,
    score: null,
    lastInputAt: null,
    idle: null,
    ...overrides,
  };
}

function screen(sessionId: string, rows: string[]): WallScreen {
  return { sessionId, rows, cursor: { x: 0, y: 0 } };
}

function send(socket: FakeWebSocket, message: WallServerMessage): void {
  socket.serverSend(JSON.stringify(message));
}

let page: FakePage;

beforeEach(() => {
  vi.useFakeTimers({ now: 2_000_000 });
  vi.spyOn(Math, "random").mockReturnValue(0.5);
  installFakeWebSocket();
  page = new FakePage();
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

function startWall(): WallConnection {
  const wall = new WallConnection("/api/labs/linux%20basics/wall", page);
  wall.start();
  return wall;
}

describe("WallConnection", () => {
  it("stays shut once the BFF refused it, saying so, and tries nothing again", () => {
    const wall = startWall();
    const socket = latestSocket();
    socket.serverOpen();
    send(socket, { type: "refused", reason: "too_many_walls", limit: 3 });
    socket.serverClose(1000, "refused");
    expect(wall.getState().state).toBe("refused");
    vi.advanceTimersByTime(60_000);
    page.show("hidden");
    page.show("visible");
    expect(latestSocket()).toBe(socket);
    expect(wall.getState().state).toBe("refused");
  });

  it("goes live and keeps the sessions and the latest screen of each", () => {
    const wall = startWall();
    expect(wall.getState().state).toBe("connecting");
    const socket = latestSocket();
    expect(socket.url).toBe("ws://lab.test/api/labs/linux%20basics/wall");
    socket.serverOpen();
    expect(wall.getState().state).toBe("live");

    const sessions = [session(), session({ sessionId: "s2", owner: "bob" })];
    send(socket, { type: "sessions", items: sessions });
    send(socket, { type: "screens", screens: [screen("s1", ["$ ls"]), screen("s2", ["$"])] });
    const unchanged = wall.getState().screens.get("s2");
    send(socket, { type: "screens", screens: [screen("s1", ["$ ls", "notes"])] });

    const state = wall.getState();
    expect(state.sessions).toEqual(sessions);
    expect(state.screens.get("s1")?.rows).toEqual(["$ ls", "notes"]);
    expect(state.screens.get("s2")).toBe(unchanged);
  });

  it("ignores malformed messages and keeps going", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const wall = startWall();
    const socket = latestSocket();
    socket.serverOpen();
    const listener = vi.fn();
    wall.subscribe(listener);
    const before = wall.getState();

    expect(() => socket.serverSend("{not json")).not.toThrow();
    socket.serverSend(JSON.stringify({ type: "sessions", items: "nope" }));
    socket.serverSend(new Uint8Array([1, 2]));
    expect(wall.getState()).toBe(before);
    expect(listener).not.toHaveBeenCalled();
    expect(warn).toHaveBeenCalledTimes(3);

    send(socket, { type: "sessions", items: [session()] });
    expect(wall.getState().sessions).toEqual([session()]);
    expect(FakeWebSocket.created).toHaveLength(1);
  });

  it("reconnects after a drop and keeps what it showed", () => {
    const wall = startWall();
    latestSocket().serverOpen();
    send(latestSocket(), { type: "sessions", items: [session()] });
    latestSocket().serverClose(1006);
    expect(wall.getState().state).toBe("reconnecting");
    expect(wall.getState().sessions).toEqual([session()]);

    vi.advanceTimersByTime(499);
    expect(FakeWebSocket.created).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(FakeWebSocket.created).toHaveLength(2);
    expect(wall.getState().state).toBe("reconnecting");
    latestSocket().serverOpen();
    expect(wall.getState().state).toBe("live");
  });

  it("backs off while the BFF cannot be reached, and from the start again once it opened", () => {
    startWall();
    latestSocket().serverClose(1006);
    vi.advanceTimersByTime(500);
    latestSocket().serverClose(1006);
    vi.advanceTimersByTime(999);
    expect(FakeWebSocket.created).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(FakeWebSocket.created).toHaveLength(3);
    latestSocket().serverOpen();
    latestSocket().serverClose(1006);
    vi.advanceTimersByTime(500);
    expect(FakeWebSocket.created).toHaveLength(4);
  });

  it("closes the stream while the tab is hidden and reopens it when shown", () => {
    const wall = startWall();
    const first = latestSocket();
    first.serverOpen();
    page.show("hidden");
    expect(first.closedWith).toBeDefined();
    expect(wall.getState().state).toBe("paused");
    first.serverClose(1000);
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.created).toHaveLength(1);

    page.show("visible");
    expect(wall.getState().state).toBe("connecting");
    expect(FakeWebSocket.created).toHaveLength(2);
    latestSocket().serverOpen();
    expect(wall.getState().state).toBe("live");
  });

  it("cancels a planned reconnect when the tab is hidden", () => {
    const wall = startWall();
    latestSocket().serverClose(1006);
    page.show("hidden");
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.created).toHaveLength(1);
    expect(wall.getState().state).toBe("paused");
  });

  it("starts paused in a hidden tab", () => {
    page.visibilityState = "hidden";
    const wall = startWall();
    expect(wall.getState().state).toBe("paused");
    expect(FakeWebSocket.created).toHaveLength(0);
    page.show("visible");
    expect(FakeWebSocket.created).toHaveLength(1);
  });

  it("closes the socket and stops following the tab on dispose", () => {
    const wall = startWall();
    const socket = latestSocket();
    socket.serverOpen();
    wall.dispose();
    expect(socket.closedWith).toBeDefined();
    page.show("hidden");
    page.show("visible");
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.created).toHaveLength(1);
  });

  describe("search", () => {
    const denied: WallSearch = { query: "Permission denied", regex: false, matchCase: false };
    const searchesSent = (socket: FakeWebSocket) => socket.sentJson();

    it("sends the search when it changes, and an empty one to end it", () => {
      const wall = startWall();
      const socket = latestSocket();
      socket.serverOpen();
      expect(wall.getState().search).toEqual({ kind: "none" });

      wall.setSearch(denied);
      wall.setSearch({ ...denied });
      wall.setSearch({ ...denied, regex: true });
      wall.setSearch({ query: "", regex: true, matchCase: false });
      expect(searchesSent(socket)).toEqual([
        { type: "search", search: denied },
        { type: "search", search: { ...denied, regex: true } },
        { type: "search", search: { query: "", regex: true, matchCase: false } },
      ]);
      expect(wall.getState().search).toEqual({ kind: "none" });
    });

    it("sends a search made before the socket opened once it opens, and again after every reconnect", () => {
      const wall = startWall();
      wall.setSearch(denied);
      const first = latestSocket();
      first.serverOpen();
      expect(searchesSent(first)).toEqual([{ type: "search", search: denied }]);

      first.serverClose(1006);
      vi.advanceTimersByTime(500);
      const second = latestSocket();
      expect(second).not.toBe(first);
      second.serverOpen();
      expect(searchesSent(second)).toEqual([{ type: "search", search: denied }]);

      page.show("hidden");
      page.show("visible");
      latestSocket().serverOpen();
      expect(searchesSent(latestSocket())).toEqual([{ type: "search", search: denied }]);
    });

    it("tells a new socket nothing while there is no search", () => {
      const wall = startWall();
      wall.setSearch(denied);
      wall.setSearch({ ...denied, query: "" });
      latestSocket().serverOpen();
      expect(searchesSent(latestSocket())).toEqual([]);
    });

    it("keeps the matches that answer the current search and ignores answers to an older one", () => {
      const wall = startWall();
      const socket = latestSocket();
      socket.serverOpen();
      wall.setSearch({ ...denied, query: "Perm" });
      wall.setSearch(denied);
      expect(wall.getState().search).toEqual({ kind: "pending", matches: undefined });

      const hit = { row: 3, start: 5, end: 22 };
      send(socket, {
        type: "matches",
        search: { ...denied, query: "Perm" },
        matches: [{ sessionId: "s2", hits: [], scrollbackHits: 1 }],
      });
      expect(wall.getState().search.kind).toBe("pending");

      send(socket, {
        type: "matches",
        search: denied,
        matches: [{ sessionId: "s1", hits: [hit], scrollbackHits: 0 }],
      });
      const answered = wall.getState().search;
      expect(answered.kind).toBe("answered");
      expect(answered.kind === "answered" && [...answered.matches.keys()]).toEqual(["s1"]);
      expect(answered.kind === "answered" && answered.matches.get("s1")?.hits).toEqual([hit]);

      // While the next search waits for its answer, the last matches stay.
      wall.setSearch({ ...denied, matchCase: true });
      const pending = wall.getState().search;
      expect(pending.kind === "pending" && pending.matches).toBe(
        answered.kind === "answered" && answered.matches,
      );
    });

    it("says why the BFF refused a pattern, and forgets it with the next search", () => {
      const wall = startWall();
      const socket = latestSocket();
      socket.serverOpen();
      const bad: WallSearch = { query: "(a", regex: true, matchCase: false };
      wall.setSearch(bad);
      send(socket, {
        type: "search-refused",
        search: bad,
        reason: "bad_pattern",
        detail: "Unterminated group",
      });
      expect(wall.getState().search).toEqual({ kind: "refused", detail: "Unterminated group" });

      wall.setSearch({ ...bad, query: "(a)" });
      expect(wall.getState().search).toEqual({ kind: "pending", matches: undefined });
      send(socket, { type: "search-refused", search: bad, reason: "bad_pattern", detail: "late" });
      expect(wall.getState().search.kind).toBe("pending");
    });

    it("ignores matches that arrive after the search was cleared", () => {
      const wall = startWall();
      const socket = latestSocket();
      socket.serverOpen();
      wall.setSearch(denied);
      wall.setSearch(noSearch);
      send(socket, { type: "matches", search: denied, matches: [] });
      expect(wall.getState().search).toEqual({ kind: "none" });
    });
  });
});
