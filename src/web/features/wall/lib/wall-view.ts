// What the class wall shows and in which order: the search, the filters and the sort, kept in the
// page's URL (so a TA can share or reload a view), and the rules that apply them to the sessions.
import { SessionStatus } from "../../../../common/api.ts";
import {
  wallSearchMaxLength,
  type WallMatch,
  type WallSearch,
  type WallSession,
} from "../../../../common/wall-protocol.ts";

export const wallSorts = ["hand", "owner", "idle"] as const;
/** `hand`: raised hands first, then by owner (the default); `idle`: longest without input first. */
export type WallSort = (typeof wallSorts)[number];

export const scoreFilters = ["none", "below", "above"] as const;
/** The latest self-check: `none` yet, `below` half the points, half or `above`. */
export type ScoreFilter = (typeof scoreFilters)[number];

export interface WallView {
  search: WallSearch;
  /** Only raised hands that wait for an answer. */
  hand: boolean;
  /** Only idle sessions (see isIdle). */
  idle: boolean;
  score: ScoreFilter | "";
  status: SessionStatus | "";
  /** "": every section. */
  section: string;
  sort: WallSort;
}

export const defaultWallView: WallView = {
  search: { query: "", regex: false, matchCase: false },
  hand: false,
  idle: false,
  score: "",
  status: "",
  section: "",
  sort: "hand",
};

// The names in the URL: short, since TAs paste them.
const param = {
  query: "q",
  regex: "regex",
  matchCase: "case",
  hand: "hand",
  idle: "idle",
  score: "score",
  status: "status",
  section: "section",
  sort: "sort",
} as const;

function oneOf<T extends string>(options: readonly T[], value: string | null): T | undefined {
  return options.find((option) => option === value);
}

/** The view a URL asks for; what it does not say, or says wrong, is the default. */
export function readWallView(params: URLSearchParams): WallView {
  const status = SessionStatus.safeParse(params.get(param.status));
  return {
    search: {
      query: (params.get(param.query) ?? "").slice(0, wallSearchMaxLength),
      regex: params.get(param.regex) === "1",
      matchCase: params.get(param.matchCase) === "1",
    },
    hand: params.get(param.hand) === "1",
    idle: params.get(param.idle) === "1",
    score: oneOf(scoreFilters, params.get(param.score)) ?? "",
    status: status.success ? status.data : "",
    section: params.get(param.section) ?? "",
    sort: oneOf(wallSorts, params.get(param.sort)) ?? defaultWallView.sort,
  };
}

/** The URL's search parameters for a view (for paths.labWall.to): only what differs from the default. */
export function wallViewParams(view: WallView): Record<string, string> {
  const params: Record<string, string> = {};
  // The query as typed, spaces and all: a regular expression's may matter.
  if (view.search.query !== "") params[param.query] = view.search.query;
  if (view.search.regex) params[param.regex] = "1";
  if (view.search.matchCase) params[param.matchCase] = "1";
  if (view.hand) params[param.hand] = "1";
  if (view.idle) params[param.idle] = "1";
  if (view.score) params[param.score] = view.score;
  if (view.status) params[param.status] = view.status;
  if (view.section) params[param.section] = view.section;
  if (view.sort !== defaultWallView.sort) params[param.sort] = view.sort;
  return params;
}

/** No console input for this long makes a session idle on the wall, as does the BFF's idle limit. */
export const idleAfterMs = 5 * 60_000;

/**
 * Idle: the BFF warns of or has applied the lab's idle limit, or the owner typed nothing for
 * `idleAfterMs`. A session without any input yet is not idle by this rule, since the wall cannot tell
 * a fresh session from a forgotten one; a lab's idle limit counts from the start and covers those.
 */
export function isIdle(session: WallSession, now: number): boolean {
  if (session.idle) return true;
  return session.lastInputAt !== null && now - Date.parse(session.lastInputAt) >= idleAfterMs;
}

/** A raised hand no TA has answered yet. */
export function handWaits(session: WallSession): boolean {
  return session.help !== null && session.help.acknowledgedBy === null;
}

/**
 * Which score bucket a session is in. The wall carries points, so `maxScore` (the points of the
 * lab's self-checks) makes them a share; undefined while that is unknown.
 */
export function scoreBucket(score: number | null, maxScore: number | undefined): ScoreFilter | undefined {
  if (score === null) return "none";
  if (maxScore === undefined || maxScore <= 0) return undefined;
  return score / maxScore < 0.5 ? "below" : "above";
}

/** The sections the wall's sessions are in, sorted; empty in a course without sections. */
export function sectionsOf(sessions: readonly WallSession[]): string[] {
  const sections = new Set<string>();
  for (const session of sessions) if (session.section !== null) sections.add(session.section);
  return [...sections].sort((a, b) => a.localeCompare(b));
}

export interface ArrangeContext {
  now: number;
  /** The points of the lab's self-checks, if known. */
  selfCheckMaxScore: number | undefined;
  /** The BFF's matches for the current search by session, or undefined while there are none to use. */
  matches: ReadonlyMap<string, WallMatch> | undefined;
}

export interface ArrangedWall {
  /** The sessions the filters keep: those matching the search first, then in the view's order. */
  sessions: WallSession[];
  /** How many of `sessions` match the search. */
  matching: number;
}

export function arrangeWall(
  all: readonly WallSession[],
  view: WallView,
  { now, selfCheckMaxScore, matches }: ArrangeContext,
): ArrangedWall {
  const kept = all.filter(
    (session) =>
      (!view.hand || handWaits(session)) &&
      (!view.idle || isIdle(session, now)) &&
      (!view.score || scoreBucket(session.score, selfCheckMaxScore) === view.score) &&
      (!view.status || session.status === view.status) &&
      (!view.section || session.section === view.section),
  );
  const order = comparators[view.sort];
  const matched = (session: WallSession) => (matches?.has(session.sessionId) ? 0 : 1);
  const sessions = kept.sort((a, b) => matched(a) - matched(b) || order(a, b));
  return {
    sessions,
    matching: matches ? kept.filter((session) => matches.has(session.sessionId)).length : 0,
  };
}

const byOwner = (a: WallSession, b: WallSession) =>
  a.owner.localeCompare(b.owner) || a.sessionId.localeCompare(b.sessionId);

/** Longest without input first; a session without input yet has no idle time to rank, so it goes last. */
function byLastInput(a: WallSession, b: WallSession): number {
  if (a.lastInputAt === b.lastInputAt) return 0;
  if (a.lastInputAt === null) return 1;
  if (b.lastInputAt === null) return -1;
  return Date.parse(a.lastInputAt) - Date.parse(b.lastInputAt);
}

const comparators: Record<WallSort, (a: WallSession, b: WallSession) => number> = {
  hand: (a, b) => Number(handWaits(b)) - Number(handWaits(a)) || byOwner(a, b),
  owner: byOwner,
  idle: (a, b) => byLastInput(a, b) || byOwner(a, b),
};
