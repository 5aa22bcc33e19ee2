// One wall's search over its screens. Hits index the rows this wall last sent each browser, so the
// tab highlights exactly what it shows; the scrollback above them is counted as the hub's copy holds
// it at the time (screen.ts, searchableScrollback). Only screens sent anew since their last search
// are searched again (and every screen when the search changes), oldest first, a row at a time in
// slices the caller bounds: a slow pattern (a screen of long rows may take a hundred milliseconds)
// delays answers, never the event loop. A row searched before is not searched again: on a screen
// that scrolls, most rows only moved up (see Searching).
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

/**
 * One screen's search under way: its scrollback and rows as one, as they were when it began, and
 * the hits of the rows searched so far. A row the same as in the last search keeps its hits: where
 * the first row now is in that search says how far the rows scrolled up (a wrong guess costs only
 * searching again, since hits depend on a row's text alone).
 */
class Searching {
  readonly hits: (readonly RowHit[])[] = [];
  private readonly shift: number;

  constructor(
    readonly sessionId: string,
    readonly rows: readonly string[],
    readonly scrollbackRows: number,
    private readonly before: SearchedRows | undefined,
  ) {
    this.shift = Math.max(0, before?.rows.indexOf(rows[0] ?? "") ?? 0);
  }

  get done(): boolean {
    return this.hits.length === this.rows.length;
  }

  searchNextRow(matcher: RowMatcher): void {
    const index = this.hits.length;
    const row = this.rows[index]!;
    const earlier = this.before;
    this.hits.push(
      earlier?.rows[index + this.shift] === row ? earlier.hits[index + this.shift]! : matcher.hitsIn(row),
    );
  }
}

export class WallMatches {
  private search = noSearch;
  private matcher: RowMatcher | undefined;
  private readonly screens = new Map<string, SearchedScreen>();
  /** Screens to search, oldest first (a Set keeps the order of first insertion). */
  private readonly due = new Set<string>();
  /** The screen being searched, when a slice ended in the middle of it. */
  private searching: Searching | undefined;
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
    if (this.searching?.sessionId === sessionId) this.searching = undefined;
  }

  /**
   * Searches due screens, a row at a time, until `deadline` (performance.now()), at least one row
   * each call; how many screens it finished, and whether some are still due.
   */
  searchUntil(deadline: number): { searched: number; more: boolean } {
    const matcher = this.matcher;
    let searched = 0;
    let rows = 0;
    while (matcher) {
      const job = this.searching ?? this.nextScreen();
      if (!job) break;
      while (!job.done) {
        if (rows > 0 && performance.now() >= deadline) return { searched, more: true };
        job.searchNextRow(matcher);
        rows += 1;
      }
      this.finish(job);
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
    this.searching = undefined;
    this.due.clear();
    for (const [sessionId, screen] of this.screens) {
      screen.searched = undefined;
      screen.match = undefined;
      if (matcher) this.due.add(sessionId);
    }
  }

  /** The oldest due screen, its search begun; undefined when none is due. */
  private nextScreen(): Searching | undefined {
    for (const sessionId of this.due) {
      this.due.delete(sessionId);
      const screen = this.screens.get(sessionId);
      if (!screen) continue;
      // As one, since the rows that scroll up off the screen are the scrollback's newest.
      const scrollback = this.deps.scrollbackOf(sessionId);
      this.searching = new Searching(
        sessionId,
        [...scrollback, ...screen.rows],
        scrollback.length,
        screen.searched,
      );
      return this.searching;
    }
    return undefined;
  }

  private finish(job: Searching): void {
    this.searching = undefined;
    const screen = this.screens.get(job.sessionId);
    if (!screen) return;
    const hits: WallMatch["hits"] = [];
    job.hits.slice(job.scrollbackRows).forEach((rowHits, row) => {
      for (const hit of rowHits) if (hits.length < maxHits) hits.push({ row, ...hit });
    });
    const scrollbackHits = job.hits
      .slice(0, job.scrollbackRows)
      .reduce((total, rowHits) => total + rowHits.length, 0);
    screen.searched = { rows: job.rows, hits: job.hits };
    screen.match =
      hits.length > 0 || scrollbackHits > 0 ? { sessionId: job.sessionId, hits, scrollbackHits } : undefined;
  }
}
