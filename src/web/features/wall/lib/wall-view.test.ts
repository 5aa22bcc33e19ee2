import { describe, expect, it } from "vitest";
import type { WallMatch, WallSession } from "../../../../common/wall-protocol.ts";
import {
  arrangeWall,
  defaultWallView,
  idleAfterMs,
  isIdle,
  readWallView,
  scoreBucket,
  sectionsOf,
  wallViewParams,
  type ArrangeContext,
  type WallView,
} from "./wall-view.ts";

const now = Date.parse("2026-11-20T10:00:00.000Z");
const minutesAgo = (minutes: number) => new Date(now - minutes * 60_000).toISOString();

function session(overrides: Partial<WallSession> = {}): WallSession {
  const owner = overrides.owner ?? "ada";
  return {
    sessionId: `s-${owner}`,
    owner,
    section: null,
    status: "running",
    expiresAt: "2026-11-20T12:00:00.000Z",
    help: null,
    score: null,
    lastInputAt: minutesAgo(1),
    idle: null,
    ...overrides,
  };
}

const raised = { raisedAt: minutesAgo(2), note: "", acknowledgedBy: null };
const answered = { ...raised, acknowledgedBy: "tara" };

function view(overrides: Partial<WallView> = {}): WallView {
  return { ...defaultWallView, ...overrides };
}

const context: ArrangeContext = { now, selfCheckMaxScore: 4, matches: undefined };
const owners = (sessions: readonly WallSession[]) => sessions.map((each) => each.owner);

describe("isIdle", () => {
  it("is idle after five minutes without input, or with the BFF's idle warning or pause", () => {
    expect(isIdle(session({ lastInputAt: minutesAgo(4.9) }), now)).toBe(false);
    expect(isIdle(session({ lastInputAt: new Date(now - idleAfterMs).toISOString() }), now)).toBe(true);
    const warning = { state: "warning", action: "pause", endsAt: minutesAgo(-3) } as const;
    expect(isIdle(session({ idle: warning }), now)).toBe(true);
    expect(isIdle(session({ idle: { ...warning, state: "paused" } }), now)).toBe(true);
  });

  it("does not call a session without any input idle by the clock alone", () => {
    expect(isIdle(session({ lastInputAt: null }), now)).toBe(false);
  });
});

describe("scoreBucket", () => {
  it("splits at half the self-checks' points", () => {
    expect(scoreBucket(null, 4)).toBe("none");
    expect(scoreBucket(1.5, 4)).toBe("below");
    expect(scoreBucket(2, 4)).toBe("above");
    expect(scoreBucket(4, 4)).toBe("above");
    expect(scoreBucket(0, 4)).toBe("below");
  });

  it("cannot place a score while the points are unknown", () => {
    expect(scoreBucket(3, undefined)).toBeUndefined();
    expect(scoreBucket(0, 0)).toBeUndefined();
    expect(scoreBucket(null, undefined)).toBe("none");
  });
});

describe("arrangeWall", () => {
  const ada = session({ owner: "ada", lastInputAt: minutesAgo(2), score: 4, section: "mon" });
  const bob = session({ owner: "bob", help: raised, lastInputAt: minutesAgo(30), score: 1, section: "tue" });
  const cy = session({ owner: "cy", lastInputAt: null, status: "starting", section: "mon" });
  const dee = session({ owner: "dee", help: answered, lastInputAt: minutesAgo(9), score: 2 });
  const all = [dee, cy, bob, ada];

  it("puts waiting hands first and the rest by owner by default", () => {
    expect(owners(arrangeWall(all, view(), context).sessions)).toEqual(["bob", "ada", "cy", "dee"]);
  });

  it("sorts by owner, or by the longest time since the last input with no input yet last", () => {
    expect(owners(arrangeWall(all, view({ sort: "owner" }), context).sessions)).toEqual([
      "ada",
      "bob",
      "cy",
      "dee",
    ]);
    expect(owners(arrangeWall(all, view({ sort: "idle" }), context).sessions)).toEqual([
      "bob",
      "dee",
      "ada",
      "cy",
    ]);
  });

  it("puts the matching screens first, each group in the chosen order, and counts them", () => {
    const match = (owner: string): [string, WallMatch] => [
      `s-${owner}`,
      { sessionId: `s-${owner}`, hits: [], scrollbackHits: 1 },
    ];
    const matches = new Map([match("dee"), match("ada")]);
    const arranged = arrangeWall(all, view({ sort: "owner" }), { ...context, matches });
    expect(owners(arranged.sessions)).toEqual(["ada", "dee", "bob", "cy"]);
    expect(arranged.matching).toBe(2);

    const filtered = arrangeWall(all, view({ section: "mon" }), { ...context, matches });
    expect(owners(filtered.sessions)).toEqual(["ada", "cy"]);
    expect(filtered.matching).toBe(1);
  });

  it("filters by waiting hand, idleness, status and section", () => {
    const arrange = (overrides: Partial<WallView>) =>
      owners(arrangeWall(all, view(overrides), context).sessions);
    expect(arrange({ hand: true })).toEqual(["bob"]);
    expect(arrange({ idle: true })).toEqual(["bob", "dee"]);
    expect(arrange({ status: "starting" })).toEqual(["cy"]);
    expect(arrange({ section: "mon" })).toEqual(["ada", "cy"]);
    expect(arrange({ idle: true, section: "tue" })).toEqual(["bob"]);
  });

  it("filters by the latest self-check's share of the points", () => {
    const arrange = (score: WallView["score"], selfCheckMaxScore = 4) =>
      owners(arrangeWall(all, view({ score }), { ...context, selfCheckMaxScore }).sessions);
    expect(arrange("none")).toEqual(["cy"]);
    expect(arrange("below")).toEqual(["bob"]);
    expect(arrange("above")).toEqual(["ada", "dee"]);
    expect(arrange("above", 10)).toEqual([]);
  });

  it("leaves the sessions it was given as they were", () => {
    const given = [...all];
    arrangeWall(given, view({ sort: "owner" }), context);
    expect(given).toEqual(all);
  });
});

describe("sectionsOf", () => {
  it("lists each section once, sorted, and none in a course without sections", () => {
    expect(
      sectionsOf([session({ section: "tue" }), session({ section: "mon" }), session({ section: "tue" })]),
    ).toEqual(["mon", "tue"]);
    expect(sectionsOf([session()])).toEqual([]);
  });
});

describe("the view in the URL", () => {
  it("writes only what differs from the default, and reads back what it wrote", () => {
    expect(wallViewParams(defaultWallView)).toEqual({});
    const chosen = view({
      search: { query: " Permission denied", regex: true, matchCase: true },
      hand: true,
      idle: true,
      score: "below",
      status: "running",
      section: "mon",
      sort: "idle",
    });
    const params = new URLSearchParams(wallViewParams(chosen));
    expect(params.toString()).toBe(
      "q=+Permission+denied&regex=1&case=1&hand=1&idle=1&score=below&status=running&section=mon&sort=idle",
    );
    expect(readWallView(params)).toEqual(chosen);
  });

  it("takes the default for what a URL gets wrong", () => {
    const read = readWallView(
      new URLSearchParams("score=most&status=gone&sort=size&hand=yes&q=" + "x".repeat(300)),
    );
    expect(read).toEqual(view({ search: { ...defaultWallView.search, query: "x".repeat(200) } }));
  });
});
