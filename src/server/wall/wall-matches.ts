// One wall's search over its screens. Hits index the rows this wall last sent each browser, so the
// tab highlights exactly what it shows; the scrollback above them is counted as the hub's copy holds
// it at the time (screen.ts, searchableScrollback). Only screens sent anew since their last search
// are searched again (and every screen when the search changes), oldest first, in slices the caller
// bounds: a slow pattern delays answers, never the event loop. A row searched before is not searched
// again: on a screen that scrolls, most rows only moved up (searchedRows).
import type { WallMatch, WallSearch, WallServerMessage } from "../../common/wall-protocol.ts";
import { BadPattern, compileSearch, maxHits, type RowHit, type RowMatcher } from "./wall-search.ts";

export interface WallMatchesDeps {
  /** The rows above a session's screen, oldest first; none when its console is not open here. */
  scrollbackOf(sessionId: string): string[];
}

/** Rows and the hits found in each. */
interface SearchedRows {
  rows: readonly string[];
  hits: (readonly RowHit[])[];
}

interface SearchedScreen {
  /** The rows as this wall last sent them. */
  rows: string[];
  /** The last search of the scrollback and the screen's rows below it, as one. */
  searched?: SearchedRows;
  /** Undefined when nothing matched. */
  match?: WallMatch;
}

const noSearch: WallSearch = { query: "", regex: false, matchCase: false };

export class WallMatches {
  private search = noSearch;
  private matcher: RowMatcher | undefined;
  private readonly screens = new Map<string, SearchedScreen>();
  /** Screens to search, oldest first (a Set keeps the order of first insertion). */
  private readonly due = new Set<string>();
  /** What the browser was last told, to send only what changed. */
  private told = "";

  constructor(private readonly deps: WallMatchesDeps) {}

  /** A new search; answers `search-refused` when the pattern cannot run (the old search is dropped). */
  setSearch(search: WallSearch): WallServerMessage | undefined {
    let matcher: RowMatcher | undefined;
    try {
      matcher = compileSearch(search);
    } catch (error) {
      if (!(error instanceof BadPattern)) throw error;
      this.replaceSearch(noSearch, undefined);
      // A later search gets its answer even if it matches as little as this one.
      this.told = "";
      return { type: "search-refused", search, reason: "bad_pattern", detail: error.message };
    }
    this.replaceSearch(search, matcher);
    return undefined;
  }

  /** The wall sent the session's screen: search it again. */
  screenSent(sessionId: string, rows: string[]): void {
    const screen = this.screens.get(sessionId);
    if (screen) screen.rows = rows;
    else this.screens.set(sessionId, { rows });
    if (this.matcher) this.due.add(sessionId);
  }

  /** The session left the wall. */
  forget(sessionId: string): void {
    this.screens.delete(sessionId);
    this.due.delete(sessionId);
  }

  /** Searches due screens until `deadline` (performance.now()); how many it searched, and whether some are still due. */
  searchUntil(deadline: number): { searched: number; more: boolean } {
    let searched = 0;
    for (const sessionId of this.due) {
      if (searched > 0 && performance.now() >= deadline) return { searched, more: true };
      this.due.delete(sessionId);
      this.searchScreen(sessionId);
      searched += 1;
    }
    return { searched, more: false };
  }

  /** The `matches` frame when the answer differs from the one last sent. */
  takeMessage(): WallServerMessage | undefined {
    const matches = [...this.screens.values()].flatMap((screen) => (screen.match ? [screen.match] : []));
    const message: WallServerMessage = { type: "matches", search: this.search, matches };
    const text = JSON.stringify(message);
    if (text === this.told) return undefined;
    this.told = text;
    return message;
  }

  private replaceSearch(search: WallSearch, matcher: RowMatcher | undefined): void {
    this.search = search;
    this.matcher = matcher;
    this.due.clear();
    for (const [sessionId, screen] of this.screens) {
      screen.searched = undefined;
      screen.match = undefined;
      if (matcher) this.due.add(sessionId);
    }
  }

  private searchScreen(sessionId: string): void {
    const screen = this.screens.get(sessionId);
    const matcher = this.matcher;
    if (!screen || !matcher) return;
    // As one, since the rows that scroll up off the screen are the scrollback's newest.
    const scrollback = this.deps.scrollbackOf(sessionId);
    const searched = searchedRows([...scrollback, ...screen.rows], screen.searched, matcher);
    const hits: WallMatch["hits"] = [];
    searched.hits.slice(scrollback.length).forEach((rowHits, row) => {
      for (const hit of rowHits) if (hits.length < maxHits) hits.push({ row, ...hit });
    });
    const scrollbackHits = searched.hits
      .slice(0, scrollback.length)
      .reduce((total, rowHits) => total + rowHits.length, 0);
    screen.searched = searched;
    screen.match = hits.length > 0 || scrollbackHits > 0 ? { sessionId, hits, scrollbackHits } : undefined;
  }
}

/**
 * The hits in each row, taken from `before` for a row that is the same as there: where the first row
 * now is in `before` says how far the rows scrolled up. Hits depend on a row's text alone, so a wrong
 * guess costs only searching again.
 */
function searchedRows(
  rows: readonly string[],
  before: SearchedRows | undefined,
  matcher: RowMatcher,
): SearchedRows {
  const shift = Math.max(0, before?.rows.indexOf(rows[0] ?? "") ?? 0);
  return {
    rows,
    hits: rows.map((row, index) =>
      before?.rows[index + shift] === row ? before.hits[index + shift]! : matcher.hitsIn(row),
    ),
  };
}
