// One open class wall (one staff browser tab): every tick it sends the screens whose version moved
// since it last sent them, then searches them when the tab asked for a search (wall-matches.ts), and
// now and then the lab's session list (status, time, hand, score, last input) when that changed.
// Screens come from the console hub's own copy of each console, never from a connection of its own:
// KubeVirt allows one per VMI. So the wall keeps each running session's console open in the hub
// while it is on the wall, which makes the miniature live even when nobody else watches that session.
// A graphical lab's sessions show their VM's screen in miniature, from the hub's framebuffer alike.
import type WebSocket from "ws";
import type { Session } from "../../common/api.ts";
import {
  WallClientMessage,
  type WallDesktop,
  type WallScreen,
  type WallSearch,
  type WallServerMessage,
  type WallSession,
} from "../../common/wall-protocol.ts";
import type { SearchBudget } from "./search-budget.ts";
import { type ScrollbackRows, WallMatches } from "./wall-matches.ts";

/** What the wall needs of the console hub (and, with replicas, of console placement). */
export interface WallConsoles {
  /**
   * Keeps the session's consoles the wall shows open here (its serial console, its screen for a
   * graphical lab); undefined when it cannot (another replica holds them).
   */
  keepOpen(session: Session): Promise<(() => void) | undefined>;
  /** Whether any console of the session is open here. */
  isOpen(sessionId: string): boolean;
  /** The console's screen when it is open here; read it once `screenParsed` resolved. */
  screenOf(sessionId: string):
    | {
        screenVersion: number;
        screenParsed(): Promise<void>;
        screenText(): WallScreenText;
        searchableScrollback(): ScrollbackRows;
      }
    | undefined;
  /** The miniature of the session's screen when it is open here. */
  thumbnailOf(sessionId: string): { version: number; width: number; height: number; png: Buffer } | undefined;
}

/** A console not open here. */
const noScrollback: ScrollbackRows = { rows: [], first: 0, from: Symbol("no console") };

export interface WallScreenText {
  rows: string[];
  cursor: { x: number; y: number };
}

export interface WallStreamDeps {
  socket: WebSocket;
  consoles: WallConsoles;
  /** The lab's sessions as the staff member may see them. */
  listSessions(): Promise<Session[]>;
  /** The latest self-check score of a session, or null. */
  lastScore(sessionId: string): Promise<number | null>;
  /** When each session's console last had input (last-input.ts), null when never. */
  lastInputs(sessionIds: string[]): Promise<Map<string, string | null>>;
  screenIntervalMs: number;
  listIntervalMs: number;
  /** Above this many unsent bytes a tick sends no screens (the next one sends the newest). */
  maxBufferedBytes: number;
  /** A search went through the screens due, in this long (lab_console_wall_search_seconds). */
  onSearched?(durationMs: number): void;
  /** The search time of the person the wall is for, shared with their other walls (search-budget.ts). */
  searchBudget: SearchBudget;
  log: { warn(object: object, message: string): void };
}

// With replicas, a console another one holds is asked about again this often (a lease look-up).
const askElsewhereAgainMs = 30_000;

/** Sessions with a console worth showing. */
const shownStatuses = new Set<Session["status"]>(["starting", "running", "failed"]);
/** A search runs in slices this long at most, so that consoles and other walls go on in between. */
const searchSliceMs = 5;
/** Searches typed fast (one per key) are taken at most this often: each one searches every screen. */
const searchEveryMs = 100;

export class WallStream {
  /** Per running session: how to let its console go, or when another replica was found to hold it. */
  private readonly kept = new Map<string, { release: () => void } | { elsewhereSince: number }>();
  private readonly sentVersions = new Map<string, number>();
  private readonly sentDesktops = new Map<string, number>();
  private sessions: Session[] = [];
  private lastList = "";
  private screenTimer: NodeJS.Timeout | undefined;
  private listTimer: NodeJS.Timeout | undefined;
  private refreshing = false;
  private sendingScreens = false;
  private closed = false;
  private readonly matches: WallMatches;
  private searching = false;
  /** A new search was taken: its answer goes out even if no screen was searched. */
  private answerDue = false;
  /** The latest search the tab sent, until it is taken. */
  private nextSearch: WallSearch | undefined;
  private searchTimer: NodeJS.Timeout | undefined;
  private lastSearchAt = -Infinity;

  constructor(private readonly deps: WallStreamDeps) {
    this.matches = new WallMatches({
      scrollbackOf: (id) => deps.consoles.screenOf(id)?.searchableScrollback() ?? noScrollback,
    });
    deps.socket.on("close", () => this.close());
    // ws closes the socket itself after an error (1009 for a frame over maxPayload, 1002 for a bad one).
    deps.socket.on("error", () => this.close());
    deps.socket.on("message", (data: Buffer, isBinary: boolean) => this.received(data, isBinary));
  }

  start(): void {
    void this.refreshList();
    this.screenTimer = setInterval(() => void this.sendScreens(), this.deps.screenIntervalMs);
    this.listTimer = setInterval(() => void this.refreshList(), this.deps.listIntervalMs);
  }

  close(code = 1000, reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.screenTimer);
    clearInterval(this.listTimer);
    clearTimeout(this.searchTimer);
    for (const entry of this.kept.values()) if ("release" in entry) entry.release();
    this.kept.clear();
    if (this.deps.socket.readyState === this.deps.socket.OPEN) this.deps.socket.close(code, reason);
  }

  private async refreshList(): Promise<void> {
    if (this.refreshing || this.closed) return;
    this.refreshing = true;
    try {
      const sessions = (await this.deps.listSessions()).filter((session) =>
        shownStatuses.has(session.status),
      );
      if (this.closed) return;
      this.sessions = sessions;
      await this.keepRunningOpen();
      const lastInputs = await this.deps.lastInputs(sessions.map((session) => session.id));
      const items: WallSession[] = await Promise.all(
        sessions.map(async (session) => ({
          sessionId: session.id,
          owner: session.owner,
          section: session.section,
          status: session.status,
          expiresAt: session.expiresAt,
          help: session.help ?? null,
          score: await this.deps.lastScore(session.id),
          lastInputAt: lastInputs.get(session.id) ?? null,
          idle: session.idle ?? null,
        })),
      );
      const list = JSON.stringify(items);
      if (list !== this.lastList && !this.closed) {
        this.lastList = list;
        this.send({ type: "sessions", items });
      }
    } catch (error) {
      // The next refresh tries again; the wall keeps what it shows meanwhile.
      this.deps.log.warn({ err: error }, "class wall could not list its sessions");
    } finally {
      this.refreshing = false;
    }
  }

  /** Running sessions get their console kept open; the others (and those gone) are let go. */
  private async keepRunningOpen(): Promise<void> {
    const running = new Map(
      this.sessions.filter((session) => session.status === "running").map((session) => [session.id, session]),
    );
    const now = Date.now();
    for (const [id, entry] of this.kept) {
      // Gone from the wall, its console closed meanwhile (ended, let go), or time to ask again
      // whether the replica that held it still does.
      const stale =
        "release" in entry
          ? !this.deps.consoles.isOpen(id)
          : now - entry.elsewhereSince >= askElsewhereAgainMs;
      if (!running.has(id) || stale) {
        if ("release" in entry) entry.release();
        this.kept.delete(id);
        this.sentVersions.delete(id);
        this.sentDesktops.delete(id);
        this.matches.forget(id);
      }
    }
    for (const [id, session] of running) {
      if (this.kept.has(id)) continue;
      const release = await this.deps.consoles.keepOpen(session);
      if (this.closed) {
        release?.();
        return;
      }
      this.kept.set(id, release ? { release } : { elsewhereSince: now });
    }
  }

  private async sendScreens(): Promise<void> {
    if (this.closed || this.sendingScreens || this.deps.socket.bufferedAmount > this.deps.maxBufferedBytes)
      return;
    this.sendingScreens = true;
    const desktops: WallDesktop[] = [];
    const changed: {
      id: string;
      version: number;
      screen: NonNullable<ReturnType<WallConsoles["screenOf"]>>;
    }[] = [];
    for (const id of this.kept.keys()) {
      const thumbnail = this.deps.consoles.thumbnailOf(id);
      if (thumbnail && this.sentDesktops.get(id) !== thumbnail.version) {
        this.sentDesktops.set(id, thumbnail.version);
        const { width, height, png } = thumbnail;
        desktops.push({ sessionId: id, width, height, png: png.toString("base64") });
      }
      const screen = this.deps.consoles.screenOf(id);
      if (screen && this.sentVersions.get(id) !== screen.screenVersion) {
        changed.push({ id, version: screen.screenVersion, screen });
      }
    }
    // A screen copy parses lazily: the wall shows what each printed up to now, its search too.
    await Promise.all(changed.map(({ screen }) => screen.screenParsed()));
    this.sendingScreens = false;
    if (this.closed) return;
    const screens: WallScreen[] = [];
    for (const { id, version, screen } of changed) {
      // A session that left the wall meanwhile, or whose console closed, is not shown (this time).
      if (!this.kept.has(id) || this.deps.consoles.screenOf(id) !== screen) continue;
      this.sentVersions.set(id, version);
      const text = screen.screenText();
      screens.push({ sessionId: id, ...text });
      this.matches.screenSent(id, text.rows);
    }
    if (screens.length > 0) this.send({ type: "screens", screens });
    const stillShown = desktops.filter((desktop) => this.kept.has(desktop.sessionId));
    if (stillShown.length > 0) this.send({ type: "desktops", desktops: stillShown });
    this.search();
  }

  /** Text frames with a search, as the schema has them; anything else ends the wall (a broken tab). */
  private received(data: Buffer, isBinary: boolean): void {
    if (this.closed) return;
    let message: WallClientMessage | undefined;
    try {
      message = isBinary ? undefined : WallClientMessage.parse(JSON.parse(data.toString("utf8")));
    } catch {
      message = undefined;
    }
    if (!message) {
      this.close(1008, "not a wall message");
      return;
    }
    this.nextSearch = message.search;
    this.searchTimer ??= setTimeout(
      () => {
        this.searchTimer = undefined;
        this.lastSearchAt = performance.now();
        this.startSearch();
      },
      Math.max(0, this.lastSearchAt + searchEveryMs - performance.now()),
    );
  }

  private startSearch(): void {
    const search = this.nextSearch;
    if (!search || this.closed) return;
    this.nextSearch = undefined;
    const refused = this.matches.setSearch(search);
    if (refused) {
      this.send(refused);
      return;
    }
    // Even with no screen to search (or no search), the tab gets its answer.
    this.answerDue = true;
    this.search();
  }

  /**
   * Searches the screens due, a slice at a time while its person's search budget lasts; then sends
   * what changed. What is left waits for the next tick.
   */
  private search(): void {
    if (this.searching || this.closed) return;
    this.searching = true;
    const budget = this.deps.searchBudget;
    let spentMs = 0;
    let searched = 0;
    const slice = () => {
      if (this.closed) return;
      const started = performance.now();
      const run =
        budget.leftMs > 0 ? this.matches.searchUntil(started + searchSliceMs) : { searched: 0, more: true };
      const took = performance.now() - started;
      budget.spend(took);
      spentMs += took;
      searched += run.searched;
      if (run.more && budget.leftMs > 0) {
        setImmediate(slice);
        return;
      }
      this.searching = false;
      if (searched > 0) this.deps.onSearched?.(spentMs);
      if (searched === 0 && !this.answerDue) return;
      this.answerDue = false;
      const message = this.matches.takeMessage();
      if (message) this.send(message);
    };
    slice();
  }

  private send(message: WallServerMessage): void {
    if (this.deps.socket.readyState === this.deps.socket.OPEN) this.deps.socket.send(JSON.stringify(message));
  }
}
