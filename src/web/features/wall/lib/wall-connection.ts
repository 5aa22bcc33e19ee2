// The browser's end of the class wall's websocket: keeps the session list and each session's latest
// screen. The stream runs only while the tab is visible (a hidden tab closes it, so the BFF stops its
// work for it; coming back reopens it and gets every screen anew) and reconnects after a drop.
// A plain class: the React hook only creates, subscribes and disposes it.
import { WallServerMessage, type WallScreen, type WallSession } from "../../../../common/wall-protocol.ts";
import { ReconnectingSocket, type SocketStatus } from "../../../lib/reconnecting-socket.ts";

export type WallState = "connecting" | "live" | "paused" | "reconnecting";

export interface WallData {
  state: WallState;
  sessions: WallSession[] | undefined;
  screens: ReadonlyMap<string, WallScreen>;
}

/** The page's visibility as the wall needs it: `document` in the browser. */
export interface PageVisibility {
  readonly visibilityState: DocumentVisibilityState;
  addEventListener(type: "visibilitychange", listener: () => void): void;
  removeEventListener(type: "visibilitychange", listener: () => void): void;
}

export class WallConnection {
  private data: WallData = { state: "connecting", sessions: undefined, screens: new Map() };
  private readonly listeners = new Set<() => void>();
  private readonly socket: ReconnectingSocket;
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
        open: () => this.socket.resetBackoff(),
        message: (data) => this.receive(data),
        status: (status) => this.update({ state: wallState(status) }),
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

  private followVisibility(): void {
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
    if (message.type === "sessions") {
      this.update({ sessions: message.items });
      return;
    }
    // A new map only for the screens that changed: unchanged miniatures keep their objects.
    const screens = new Map(this.data.screens);
    for (const screen of message.screens) screens.set(screen.sessionId, screen);
    this.update({ screens });
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
