// A class wall's search, compiled once: plain text, or a regular expression. Staff's patterns run on
// the BFF, where one that backtracks without end, such as `(a+)+$` against a row of a's, would stall
// every console. V8's linear-time engine takes time in proportion to the pattern times the row,
// whatever both are, and refuses what it cannot run that way (back-references, look-arounds, large
// counted repeats): the wall runs only patterns it can. But it takes a few microseconds a row, fifty
// times the usual engine, so a pattern first runs in the usual engine, which V8 makes give up after
// 50,000 backtracking steps and finish that run in the linear-time one (about 0.2 ms); a row that
// took that long switches the search to the linear-time engine for good.
//
// The linear-time engine cannot ignore case (Node 20), so case is ignored by folding text and
// pattern alike (case-fold.ts). Plain text is an escaped literal, with nothing to backtrack into (no
// repeat, choice or group): at most its length in steps at each place in a row, `i` and all.
import v8 from "node:v8";
import type { WallSearch } from "../../common/wall-protocol.ts";
import { foldCase, foldPattern } from "./case-fold.ts";

// The `l` flag, and the fallback after too much backtracking. The fallback applies to every
// expression in the process that the linear-time engine can run: the same matches, only a bound on
// the time. Before any expression is made: the limit is set when one is.
v8.setFlagsFromString("--enable-experimental-regexp-engine");
v8.setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks");
const linearEngine = supportsLinearFlag();
const backtrackingBounded = linearEngine && backtrackingGivesUp();
/** A row that took this long (a usual one takes a microsecond) may have hit the backtracking limit. */
const slowRowMs = 0.05;
/**
 * A pattern whose rows were slow this often did hit it: a garbage collection or another process
 * makes a row slow now and then, hitting the limit makes most of them slow.
 */
const slowRows = { atLeast: 10, share: 0.05 };

/** At most this many matches are found in one row, and shown on one screen ("." would find 80 a row). */
export const maxHits = 50;

/** One match in a row: UTF-16 indexes into it, end exclusive, never between the halves of a pair. */
export interface RowHit {
  start: number;
  end: number;
}

/** What most rows hold: shared, so that searching them allocates nothing. */
const noHits: readonly RowHit[] = Object.freeze([]);

export interface RowMatcher {
  /** The row's matches, left to right, at most `maxHits`; empty matches (`x*`) do not count. */
  hitsIn(row: string): readonly RowHit[];
}

/** A regular expression the wall will not run; `message` says why, for staff. */
export class BadPattern extends Error {}

/** The search's matcher; undefined for an empty query (no search). Throws BadPattern. */
export function compileSearch(search: WallSearch): RowMatcher | undefined {
  if (search.query === "") return undefined;
  if (!search.regex) {
    const literal = new RegExp(
      search.query.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&"),
      search.matchCase ? "g" : "gi",
    );
    return expressionMatcher(literal, undefined, (text) => text);
  }
  // The pattern as written first, so that a refusal quotes the staff's own mistake.
  const linear = linearExpression(search.query);
  if (search.matchCase) return expressionMatcher(new RegExp(search.query, "g"), linear, (text) => text);
  const folded = foldPattern(search.query);
  return expressionMatcher(new RegExp(folded, "g"), linearExpression(folded), foldCase);
}

/** Runs `fast` until rows are too often slow, then `linear` (the same pattern), if there is one. */
function expressionMatcher(
  fast: RegExp,
  linear: RegExp | undefined,
  fold: (text: string) => string,
): RowMatcher {
  // Without V8's limit on backtracking, the usual engine runs plain text only.
  let expression = linear && !backtrackingBounded ? linear : fast;
  let rows = 0;
  let slow = 0;
  return {
    hitsIn(row) {
      const text = fold(row);
      const hits: RowHit[] = [];
      const started = performance.now();
      expression.lastIndex = 0;
      while (hits.length < maxHits) {
        const found = expression.exec(text);
        if (!found) break;
        if (found[0] === "") {
          expression.lastIndex += 1;
          continue;
        }
        const hit = wholeCharacters(text, found.index, found.index + found[0].length);
        hits.push(hit);
        expression.lastIndex = Math.max(expression.lastIndex, hit.end);
      }
      if (linear && expression !== linear) {
        rows += 1;
        if (performance.now() - started > slowRowMs) slow += 1;
        if (slow >= slowRows.atLeast && slow >= rows * slowRows.share) expression = linear;
      }
      return hits.length > 0 ? hits : noHits;
    },
  };
}

function linearExpression(pattern: string): RegExp {
  if (!linearEngine) throw new BadPattern("regular expressions are not available on this server");
  try {
    // eslint-disable-next-line no-invalid-regexp -- `l` is V8's linear-time engine, enabled above
    return new RegExp(pattern, "gl");
  } catch (error) {
    throw new BadPattern(patternProblem(error));
  }
}

/** V8's message without its prefix (which repeats the pattern), in words for staff. */
function patternProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (message.endsWith("Cannot be executed in linear time")) {
    return "not supported here: back-references, look-arounds, and repeats with large counts";
  }
  return message.slice(message.lastIndexOf(": ") + 2) || message;
}

/** Widens a match that starts or ends between the halves of a surrogate pair (an emoji, say). */
function wholeCharacters(text: string, start: number, end: number): RowHit {
  const low = (index: number) => (text.charCodeAt(index) & 0xfc00) === 0xdc00;
  const high = (index: number) => (text.charCodeAt(index) & 0xfc00) === 0xd800;
  return {
    start: start > 0 && low(start) && high(start - 1) ? start - 1 : start,
    end: end < text.length && high(end - 1) && low(end) ? end + 1 : end,
  };
}

/**
 * Whether V8 took the fallback flag: a catastrophic pattern against 18 a's then gives up after
 * 50,000 steps, about a millisecond, where it would take 2^18 (tens of milliseconds, once).
 */
function backtrackingGivesUp(): boolean {
  const started = performance.now();
  new RegExp("(a+)+$").test(`${"a".repeat(18)}!`);
  return performance.now() - started < 5;
}

function supportsLinearFlag(): boolean {
  try {
    // eslint-disable-next-line no-invalid-regexp -- the flag is what this checks
    new RegExp("a", "l");
    return true;
  } catch {
    return false;
  }
}
