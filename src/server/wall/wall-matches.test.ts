// One wall's search state: what is searched again, and when a `matches` frame is due.
import { describe, expect, it } from "vitest";
import type { WallSearch } from "../../common/wall-protocol.ts";
import { ConsoleScreen } from "../console/screen.ts";
import { type ScrollbackRows, WallMatches } from "./wall-matches.ts";

const search: WallSearch = { query: "denied", regex: false, matchCase: false };

function aWall(scrollback: Record<string, string[] | ScrollbackRows> = {}) {
  const asked: string[] = [];
  const matches = new WallMatches({
    scrollbackOf: (id) => {
      asked.push(id);
      const rows = scrollback[id] ?? [];
      return Array.isArray(rows) ? { rows, first: 0, from: Symbol(id) } : rows;
    },
  });
  return { matches, asked };
}

describe("WallMatches", () => {
  it("answers a new search over every screen sent, with the hits on their rows", () => {
    const { matches } = aWall({ b: ["old: Permission denied", "denied"] });
    matches.screenSent("a", ["$ cat x", "cat: x: Permission denied"]);
    matches.screenSent("b", ["$ ls"]);
    matches.screenSent("c", ["nothing here"]);
    expect(matches.setSearch(search)).toBeUndefined();
    expect(matches.searchUntil(Infinity)).toEqual({ searched: 3, more: false });
    expect(matches.takeMessage()).toEqual({
      type: "matches",
      search,
      matches: [
        { sessionId: "a", hits: [{ row: 1, start: 19, end: 25 }], scrollbackHits: 0 },
        { sessionId: "b", hits: [], scrollbackHits: 2 },
      ],
    });
  });

  it("stops in the middle of a screen at its deadline, and goes on from that row", () => {
    const rows = Array.from({ length: 24 }, (_, index) =>
      index === 20 ? "Permission denied" : `row ${index}`,
    );
    const { matches } = aWall({ a: Array.from({ length: 100 }, (_, index) => `old ${index}`) });
    matches.screenSent("a", rows);
    matches.setSearch(search);
    // A deadline already past: one row a call, the screen unfinished until its last row.
    let calls = 0;
    let slice = matches.searchUntil(0);
    while (slice.more) {
      calls += 1;
      expect(slice.searched).toBe(0);
      slice = matches.searchUntil(0);
    }
    expect(slice).toEqual({ searched: 1, more: false });
    expect(calls).toBe(123);
    expect(matches.takeMessage()).toMatchObject({
      matches: [{ sessionId: "a", hits: [{ row: 20, start: 11, end: 17 }], scrollbackHits: 0 }],
    });
  });

  it("searches again only the screens sent since, and says so only when the answer changed", () => {
    const { matches, asked } = aWall();
    matches.screenSent("a", ["denied"]);
    matches.screenSent("b", ["fine"]);
    matches.setSearch(search);
    matches.searchUntil(Infinity);
    expect(matches.takeMessage()?.type).toBe("matches");
    asked.length = 0;

    matches.screenSent("b", ["still fine"]);
    expect(matches.searchUntil(Infinity).searched).toBe(1);
    expect(asked).toEqual(["b"]);
    expect(matches.takeMessage()).toBeUndefined();

    matches.screenSent("b", ["now denied", "and denied"]);
    matches.searchUntil(Infinity);
    expect(matches.takeMessage()).toMatchObject({ matches: [{ sessionId: "a" }, { sessionId: "b" }] });
    matches.forget("a");
    expect(matches.takeMessage()).toMatchObject({ matches: [{ sessionId: "b" }] });
  });

  it("stops at the deadline, oldest first, and goes on where it stopped", () => {
    const { matches } = aWall();
    for (const id of ["a", "b", "c"]) matches.screenSent(id, ["denied"]);
    matches.setSearch(search);
    // One screen at least per call, however late.
    expect(matches.searchUntil(0)).toEqual({ searched: 1, more: true });
    // What it found so far goes out; the rest follows.
    expect(matches.takeMessage()).toMatchObject({ matches: [{ sessionId: "a" }] });
    expect(matches.searchUntil(Infinity)).toEqual({ searched: 2, more: false });
  });

  it("refuses a bad pattern, drops the old search, and answers the next one even if it finds nothing", () => {
    const { matches } = aWall();
    matches.screenSent("a", ["denied"]);
    matches.setSearch({ query: "zzz", regex: false, matchCase: false });
    matches.searchUntil(Infinity);
    const none = matches.takeMessage();
    expect(none).toMatchObject({ matches: [] });

    const bad: WallSearch = { query: "(a)\\1", regex: true, matchCase: false };
    expect(matches.setSearch(bad)).toMatchObject({
      type: "search-refused",
      search: bad,
      reason: "bad_pattern",
    });
    expect(matches.searchUntil(Infinity).searched).toBe(0);

    matches.setSearch({ query: "zzz", regex: false, matchCase: false });
    matches.searchUntil(Infinity);
    expect(matches.takeMessage()).toEqual(none);
  });

  it("counts the scrollback's hits as it gains rows at its end and loses them at its start", () => {
    const from = Symbol("a");
    const scrollback: Record<string, ScrollbackRows> = { a: { rows: ["denied", "x", "y"], first: 0, from } };
    const { matches } = aWall(scrollback);
    matches.screenSent("a", ["$"]);
    matches.setSearch(search);
    matches.searchUntil(Infinity);
    expect(matches.takeMessage()).toMatchObject({ matches: [{ scrollbackHits: 1 }] });
    scrollback.a = { rows: ["x", "y", "denied denied", "z"], first: 1, from };
    matches.screenSent("a", ["$"]);
    matches.searchUntil(Infinity);
    expect(matches.takeMessage()).toMatchObject({ matches: [{ scrollbackHits: 2 }] });
    // Another screen copy's rows (the console opened anew), numbered as if they went on from the
    // last: searched anew.
    scrollback.a = { rows: ["y", "other", "z", "denied"], first: 2, from: Symbol("a, anew") };
    matches.screenSent("a", ["$"]);
    matches.searchUntil(Infinity);
    expect(matches.takeMessage()).toMatchObject({ matches: [{ scrollbackHits: 1 }] });
  });

  it("finds what `clear` took off a screen copy, in its scrollback", async () => {
    const screen = new ConsoleScreen(
      {
        cols: 80,
        rows: 24,
        scrollback: 1000,
        searchableRows: 1000,
        archiveAfterMs: 60_000,
        archiveBusyShare: 0,
        parseQuietMs: 0,
        parseAtLatestMs: 0,
        parseBatchBytes: 0,
      },
      () => undefined,
    );
    try {
      // What bash prints for `echo hello_world_x` and then `clear` (TERM=xterm: ED 2, then ED 3).
      screen.write(Buffer.from("$ echo hello_world_x\r\nhello_world_x\r\n$ clear\r\n\x1b[H\x1b[2J\x1b[3J$ "));
      await screen.snapshot();
      const matches = new WallMatches({ scrollbackOf: () => screen.searchableScrollback() });
      matches.screenSent("a", screen.text().rows);
      matches.setSearch({ query: "hello_world_x", regex: false, matchCase: false });
      matches.searchUntil(Infinity);
      expect(matches.takeMessage()).toMatchObject({
        matches: [{ sessionId: "a", hits: [], scrollbackHits: 2 }],
      });
    } finally {
      screen.dispose();
    }
  });
});
