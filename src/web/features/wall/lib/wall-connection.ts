// The browser's end of the class wall's websocket: keeps the session list, each session's latest
// screen and the BFF's answer to the page's search. The stream runs only while the tab is visible (a
// hidden tab closes it, so the BFF stops its work for it; coming back reopens it and gets every screen
// anew) and reconnects after a drop; every new socket is told the search again, since a new stream on
// the BFF starts with none. A plain class: the React hook only creates, subscribes and disposes it.
import {
  WallServerMessage,
  type WallClientMessage,
  type WallMatch,
  type WallDesktop,
  type WallScreen,
  type WallSearch,
  type WallSession,
} from "../../../../common/wall-protocol.ts";
import { ReconnectingSocket, type SocketStatus } from "../../../lib/reconnecting-socket.ts";

/** refused: the BFF did not open this wall (its person has as many open as they may); it stays shut. */
export type WallState = "connecting" | "live" | "paused" | "reconnecting" | "refused";

/**
 * Where the search stands: `none` without a query; `pending` until the BFF answers the current one
 * (the last answer's matches stay meanwhile, so tiles do not jump about while someone types);
 * `answered` with the matches by session; `refused` with the BFF's reason (a bad pattern).
 */
export type SearchResult =
  | { kind: "none" }
  | { kind: "pending"; matches: ReadonlyMap<string, WallMatch> | undefined }
  | { kind: "answered"; matches: ReadonlyMap<string, WallMatch> }
  | { kind: "refused"; detail: string };

export interface WallData {
  state: WallState;
  sessions: WallSession[] | undefined;
  screens: ReadonlyMap<string, WallScreen>;
  /** Graphical sessions' screens in miniature. */
  desktops: ReadonlyMap<string, WallDesktop>;
  search: SearchResult;
}

export const noSearch: WallSearch = { query: "", regex: false, matchCase: false };

export function sameSearch(a: WallSearch, b: WallSearch): boolean {
  return a.query === b.query && a.regex === b.regex && a.matchCase === b.matchCase;
}

/** The page's visibility as the wall needs it: `document` in the browser. */
export interface PageVisibility {
  readonly visibilityState: DocumentVisibilityState;
  addEventListener(type: "visibilitychange", listener: () => void): void;
  removeEventListener(type: "visibilitychange", listener: () => void): void;
}

export const initialWallData: WallData = {
  state: "connecting",
  sessions: undefined,
  screens: new Map(),
  desktops: new Map(),
  search: { kind: "none" },
};

export class WallConnection {
  private data: WallData = initialWallData;
  private searched: WallSearch = noSearch;
  private readonly listeners = new Set<() => void>();
  private readonly socket: ReconnectingSocket;
  private refused = false;
  private readonly onVisibility = () => this.followVisibility();

  /** `path`: the wall's path on the page's host (see use-wall-stream.ts). */
  constructor(
    path: string,
    private readonly page: PageVisibility = document,
  ) {
    this.socket = new ReconnectingSocket(
      path,
      {},
      {
        open: () => {
          this.socket.resetBackoff();
          // A new stream on the BFF searches nothing until told: tell it again after every reconnect.
          if (this.searched.query !== "") this.sendSearch();
        },
        message: (data) => this.receive(data),
        status: (status) => this.update({ state: this.refused ? "refused" : wallState(status) }),
      },
    );
  }

  /** For useSyncExternalStore. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = (): WallData => this.data;

  start(): void {
    this.page.addEventListener("visibilitychange", this.onVisibility);
    this.followVisibility();
  }

  dispose(): void {
    this.page.removeEventListener("visibilitychange", this.onVisibility);
    this.socket.dispose();
    this.listeners.clear();
  }

  /** Searches every screen of the wall (on the BFF); an empty query ends the search. */
  setSearch(search: WallSearch): void {
    if (sameSearch(search, this.searched)) return;
    const previous = this.data.search;
    this.searched = search;
    this.sendSearch();
    if (search.query === "") {
      this.update({ search: { kind: "none" } });
      return;
    }
    const matches =
      previous.kind === "answered" || previous.kind === "pending" ? previous.matches : undefined;
    this.update({ search: { kind: "pending", matches } });
  }

  private sendSearch(): void {
    const message: WallClientMessage = { type: "search", search: this.searched };
    // Not open: the socket's open handler sends it.
    this.socket.send(JSON.stringify(message));
  }

  private followVisibility(): void {
    if (this.refused) return;
    if (this.page.visibilityState === "hidden") this.socket.stop();
    else this.socket.start();
  }

  private receive(data: string | ArrayBuffer): void {
    const message = typeof data === "string" ? parseMessage(data) : undefined;
    if (!message) {
      // The BFF and this page disagree on the protocol (an old tab after an upgrade, most likely):
      // one unreadable frame must not take the wall down, and the next one may be fine.
      console.warn("Class wall: ignored a message this page does not understand.");
      return;
    }
    switch (message.type) {
      case "sessions":
        this.update({ sessions: message.items });
        return;
      case "screens": {
        // A new map only for the screens that changed: unchanged miniatures keep their objects.
        const screens = new Map(this.data.screens);
        for (const screen of message.screens) screens.set(screen.sessionId, screen);
        this.update({ screens });
        return;
      }
      case "desktops": {
        const desktops = new Map(this.data.desktops);
        for (const desktop of message.desktops) desktops.set(desktop.sessionId, desktop);
        this.update({ desktops });
        return;
      }
      case "matches":
        // An answer to a search the page has moved on from is of no use.
        if (this.searched.query === "" || !sameSearch(message.search, this.searched)) return;
        this.update({
          search: {
            kind: "answered",
            matches: new Map(message.matches.map((match) => [match.sessionId, match])),
          },
        });
        return;
      case "search-refused":
        if (this.searched.query === "" || !sameSearch(message.search, this.searched)) return;
        this.update({ search: { kind: "refused", detail: message.detail } });
        return;
      case "refused":
        // Trying again would be refused again: the page says what to do instead.
        this.refused = true;
        this.socket.finish();
        this.update({ state: "refused" });
        return;
    }
  }

  private update(change: Partial<WallData>): void {
    this.data = { ...this.data, ...change };
    for (const listener of this.listeners) listener();
  }
}

function parseMessage(text: string): WallServerMessage | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = WallServerMessage.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

/** The wall names no final close codes, so it is closed only when it stopped itself for a hidden tab. */
function wallState(status: SocketStatus): WallState {
  switch (status.kind) {
    case "closed":
      return "paused";
    case "connecting":
      return "connecting";
    case "open":
      return "live";
    case "reconnecting":
      return "reconnecting";
  }
}
