// The class wall's websocket (GET /api/labs/:labId/wall, staff only): the BFF streams one lab's
// sessions and live miniatures of their consoles as JSON text frames. It sends only what changed, at
// most once per interval. The browser sends only its search (the BFF searches its own screen copies,
// so no tab downloads every screen to search them) and closes the socket while its tab is hidden.
import * as z from "zod/mini";
import { HelpRequest, SessionIdle, SessionStatus } from "./api.ts";

export const WallSession = z.object({
  sessionId: z.string(),
  owner: z.string(),
  /** The owner's section, or null in a course without sections. */
  section: z.nullable(z.string()),
  status: SessionStatus,
  expiresAt: z.string(),
  help: z.nullable(HelpRequest),
  /** The latest self-check's score, or null when there is none or it could not grade. */
  score: z.nullable(z.number()),
  /**
   * The last console input (the owner's, or staff's who took the keyboard), or null when the BFF
   * knows of none; how the BFF knows: docs/class-wall.md.
   */
  lastInputAt: z.nullable(z.string()),
  /** The idle warning or pause, as on the session. */
  idle: z.nullable(SessionIdle),
});
export type WallSession = z.output<typeof WallSession>;

/** The visible screen of one console: its rows as plain text and where the cursor is. */
export const WallScreen = z.object({
  sessionId: z.string(),
  rows: z.array(z.string()),
  cursor: z.object({ x: z.number(), y: z.number() }),
});
export type WallScreen = z.output<typeof WallScreen>;

/**
 * A graphical session's screen in miniature, a PNG (base64) made from the screen the BFF holds
 * (never a connection of its own): labs whose session.consoles has "graphical" show this.
 */
export const WallDesktop = z.object({
  sessionId: z.string(),
  width: z.number(),
  height: z.number(),
  png: z.string(),
});
export type WallDesktop = z.output<typeof WallDesktop>;

/** The longest search the wall takes, in characters. */
export const wallSearchMaxLength = 200;

export const WallSearch = z.object({
  /** Empty: no search. */
  query: z.string().check(z.maxLength(wallSearchMaxLength)),
  /**
   * A regular expression (JavaScript syntax without the `u` flag; no back-references, look-arounds
   * or repeats with large counts such as `a{2,50}`), else plain text.
   */
  regex: z.boolean(),
  /** Case-sensitive; plain text and regular expressions both ignore case otherwise. */
  matchCase: z.boolean(),
});
export type WallSearch = z.output<typeof WallSearch>;

/** What the browser sends: its search, anew whenever it changes. */
export const WallClientMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("search"), search: WallSearch }),
]);
export type WallClientMessage = z.output<typeof WallClientMessage>;

/** One match on a visible row: `start` and `end` index the row's string (UTF-16, end exclusive). */
export const WallHit = z.object({ row: z.number(), start: z.number(), end: z.number() });
export type WallHit = z.output<typeof WallHit>;

export const WallMatch = z.object({
  sessionId: z.string(),
  /** The matches on the visible screen (the rows last sent), to highlight; at most 50. */
  hits: z.array(WallHit),
  /**
   * Matches in the rows that left the screen, as the BFF keeps them: scrolled up or cleared off (at
   * most 50 a row; docs/class-wall.md).
   */
  scrollbackHits: z.number(),
});
export type WallMatch = z.output<typeof WallMatch>;

export const WallServerMessage = z.discriminatedUnion("type", [
  /** Every session on the wall, whenever any of them changed (the whole list: it is small). */
  z.object({ type: z.literal("sessions"), items: z.array(WallSession) }),
  /** The screens that changed since the last frame. */
  z.object({ type: z.literal("screens"), screens: z.array(WallScreen) }),
  /** The desktops that changed since the last frame. */
  z.object({ type: z.literal("desktops"), desktops: z.array(WallDesktop) }),
  /**
   * The sessions whose screens match the search (those that match nothing are absent), whenever the
   * search or a match changed. `search` is the one they answer, so a tab ignores answers to an older one.
   */
  z.object({ type: z.literal("matches"), search: WallSearch, matches: z.array(WallMatch) }),
  /**
   * This wall is not opened: its person has `limit` walls open already. The socket closes next, and
   * opening it again helps only once one of those is closed.
   */
  z.object({ type: z.literal("refused"), reason: z.literal("too_many_walls"), limit: z.number() }),
  /** The search could not run: `bad_pattern` for a regular expression the BFF refuses. */
  z.object({
    type: z.literal("search-refused"),
    search: WallSearch,
    reason: z.literal("bad_pattern"),
    detail: z.string(),
  }),
]);
export type WallServerMessage = z.output<typeof WallServerMessage>;
