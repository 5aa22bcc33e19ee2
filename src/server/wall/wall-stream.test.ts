// One wall's stream on a real websocket pair, with the hub's side held in the test's hand: what it
// sends when a session leaves the wall while its screen is still being parsed for it.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { waitFor } from "../../common/testing/patience.ts";
import { SearchBudget } from "./search-budget.ts";
import { WallStream, type WallConsoles } from "./wall-stream.ts";
import { aRunningSession } from "../sessions/testing/fixtures.ts";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

describe("a wall's screens", () => {
  it("leave out a session that left the wall while its screen was parsed", async () => {
    const server = new WebSocketServer({ port: 0 });
    const accepted = once(server, "connection") as Promise<[WebSocket]>;
    const browser = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const [socket] = await accepted;
    const screensFor: string[] = [];
    browser.on("message", (data: Buffer) => {
      const message = JSON.parse(data.toString("utf8")) as {
        type: string;
        screens?: { sessionId: string }[];
      };
      if (message.type === "screens") screensFor.push(...message.screens!.map((screen) => screen.sessionId));
    });

    let sessions = [aRunningSession("s-1")];
    let released = false;
    let parsed!: () => void;
    let parseAsked = false;
    const screen = {
      screenVersion: 1,
      screenParsed: () => {
        parseAsked = true;
        return new Promise<void>((resolve) => (parsed = resolve));
      },
      screenText: () => ({ rows: ["$ "], cursor: { x: 2, y: 0 } }),
      searchableScrollback: () => ({ rows: [], first: 0, from: Symbol("screen") }),
    };
    const otherScreen = { ...screen, screenParsed: async () => undefined };
    const consoles: WallConsoles = {
      keepOpen: async () => () => (released = true),
      isOpen: () => true,
      screenOf: (id) => (id === "s-1" ? screen : otherScreen),
      thumbnailOf: () => undefined,
    };
    const stream = new WallStream({
      socket,
      consoles,
      listSessions: async () => sessions,
      lastScore: async () => null,
      lastInputs: async () => new Map(),
      screenIntervalMs: 10,
      listIntervalMs: 10,
      maxBufferedBytes: 1024 * 1024,
      searchBudget: new SearchBudget(0.1, 100),
      log: { warn: () => undefined },
    });
    closers.push(() => {
      stream.close();
      browser.terminate();
      server.close();
    });
    stream.start();

    await waitFor(() => parseAsked, "the wall waiting for the screen's parse");
    // The session ends meanwhile: the next list lets its console go.
    sessions = [];
    await waitFor(() => released, "the wall letting the session's console go");
    parsed();
    // Another session's screen comes after whatever the wall was to send about the first.
    sessions = [aRunningSession("s-2")];
    await waitFor(() => screensFor.includes("s-2"), "the other session's screen");
    expect(screensFor).toEqual(["s-2"]);
  });
});
