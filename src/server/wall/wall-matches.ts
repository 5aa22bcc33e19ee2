// One wall's search over its screens. Hits index the rows this wall last sent each browser, so the
// tab highlights exactly what it shows; the scrollback above them is counted as the hub's copy holds
// it at the time (screen.ts, searchableScrollback). Only screens sent anew since their last search
// are searched again (and every screen when the search changes), oldest first, a row at a time in
// slices the caller bounds: a slow pattern (a screen of long rows may take a hundred milliseconds)
// delays answers, never the event loop. A row searched before is not searched again: on a screen
// that scrolls, most rows only moved up, and the scrollback above it (a thousand rows) only gains a
// few at its end (see Searching).
import type { WallMatch, WallSearch, WallServerMessage } from "../../common/wall-protocol.ts";
import { BadPattern, compileSearch, maxHits, type RowHit, type RowMatcher } from "./wall-search.ts";

/**
 * The rows above a screen, oldest first, numbered: `first` is how many were above it before the
 * first of these. They only gain rows at the end and lose them at the start, as long as they come
 * from the same copy of the screen (`from`: one opened anew numbers its rows anew).
 */
export interface ScrollbackRows {
  rows: readonly string[];
  first: number;
  from: symbol;
}

export interface WallMatchesDeps {
  /** The rows above a session's screen; none when its console is not open here. */
  scrollbackOf(sessionId: string): ScrollbackRows;
}

/** Rows that have hits, by number (see ScrollbackRows), oldest first, and how many each has. */
type RowsHits = { row: number; count: number }[];

/** The last search of one screen: its scrollback's rows and hits, its rows and their hits. */
interface SearchedRows {
  /** Of the scrollback, only the rows with hits, by number (most rows have none). */
  scrollback: ScrollbackRows & { hits: RowsHits };
  screen: { rows: readonly string[]; hits: (readonly RowHit[])[] };
}

interface SearchedScreen {
  /** The rows as this wall last sent them. */
  rows: string[];
  searched?: SearchedRows;
  /** Undefined when nothing matched. */
  match?: WallMatch;
}

const noSearch: WallSearch = { query: "", regex: false, matchCase: false };

/**
 * What the last search of the scrollback found that it still has, and how many of its rows that
 * search covered: their numbers say how many it lost at its start. Undefined when none can be kept.
 */
function keptOf(
  scrollback: ScrollbackRows,
  before: SearchedRows["scrollback"] | undefined,
): { rows: number; hits: RowsHits } | undefined {
  if (!before || before.from !== scrollback.from) return undefined;
  const lost = scrollback.first - before.first;
  const rows = before.rows.length - lost;
  if (rows <= 0) return undefined;
  return { rows, hits: before.hits.filter((hit) => hit.row >= scrollback.first) };
}

/**
 * One screen's search under way: its scrollback and rows as they were when it began, and the hits
 * of the rows searched so far, the scrollback's first. Rows searched last time keep their hits: the
 * scrollback's (see keptOf: no time spent on the thousand rows that did not change), and a screen
 * row the same as in the last search, where the first row now is in that search saying how far the
 * rows scrolled up. A wrong guess costs only searching again, since hits depend on a row's text alone.
 */
class Searching {
  /** The hits in the scrollback's rows searched so far (those before `scrollbackNext`). */
  readonly scrollbackHits: RowsHits;
  private scrollbackNext: number;
  /** Each screen row's hits, for the rows searched so far. */
  readonly screenHits: (readonly RowHit[])[];
  private screenNext = 0;
  private readonly screenShift: number;

  constructor(
    readonly sessionId: string,
    readonly scrollback: ScrollbackRows,
    readonly screen: readonly string[],
    private readonly before: SearchedRows | undefined,
  ) {
    const kept = keptOf(scrollback, before?.scrollback);
    this.scrollbackHits = kept?.hits ?? [];
    this.scrollbackNext = kept?.rows ?? 0;
    this.screenHits = new Array<readonly RowHit[]>(screen.length);
    this.screenShift = Math.max(0, before?.screen.rows.indexOf(screen[0] ?? "") ?? 0);
  }

  get done(): boolean {
    return this.scrollbackNext === this.scrollback.rows.length && this.screenNext === this.screen.length;
  }

  /** Takes the hits of the screen rows that are the same as in the last search, up to the next that is not. */
  reuseSearched(): void {
    const earlier = this.before?.screen;
    if (!earlier || this.scrollbackNext < this.scrollback.rows.length) return;
    const { screen, screenHits, screenShift: shift } = this;
    let index = this.screenNext;
    while (index < screen.length && earlier.rows[index + shift] === screen[index]) {
      screenHits[index] = earlier.hits[index + shift]!;
      index += 1;
    }
    this.screenNext = index;
  }

  searchNextRow(matcher: RowMatcher): void {
    const { rows, first } = this.scrollback;
    if (this.scrollbackNext < rows.length) {
      const count = matcher.hitsIn(rows[this.scrollbackNext]!).length;
      if (count > 0) this.scrollbackHits.push({ row: first + this.scrollbackNext, count });
      this.scrollbackNext += 1;
      return;
    }
    this.screenHits[this.screenNext] = matcher.hitsIn(this.screen[this.screenNext]!);
    this.screenNext += 1;
  }

  get searched(): SearchedRows {
    return {
      scrollback: { ...this.scrollback, hits: this.scrollbackHits },
      screen: { rows: this.screen, hits: this.screenHits },
    };
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
   * each call (rows searched before do not count); how many screens it finished, and whether some
   * are still due.
   */
  searchUntil(deadline: number): { searched: number; more: boolean } {
    const matcher = this.matcher;
    let searched = 0;
    let rows = 0;
    while (matcher) {
      const job = this.searching ?? this.nextScreen();
      if (!job) break;
      // Rows searched before cost next to nothing: only the matcher's rows count against the deadline
      // (reading the clock for each of a thousand rows of scrollback would cost more than the rest).
      for (job.reuseSearched(); !job.done; job.reuseSearched()) {
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
      this.searching = new Searching(
        sessionId,
        this.deps.scrollbackOf(sessionId),
        screen.rows,
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
    job.screenHits.forEach((rowHits, row) => {
      for (const hit of rowHits) if (hits.length < maxHits) hits.push({ row, ...hit });
    });
    const scrollbackHits = job.scrollbackHits.reduce((total, hit) => total + hit.count, 0);
    screen.searched = job.searched;
    screen.match =
      hits.length > 0 || scrollbackHits > 0 ? { sessionId: job.sessionId, hits, scrollbackHits } : undefined;
  }
}
