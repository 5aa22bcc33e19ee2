// One open class wall (one staff browser tab): every tick it sends the screens whose version moved
// since it last sent them, and now and then the lab's session list (status, time, hand, score) when
// that changed. Screens come from the console hub's own copy of each console, never from a
// connection of its own: KubeVirt allows one per VMI. So the wall keeps each running session's
// console open in the hub while it is on the wall, which makes the miniature live even when nobody
// else watches that session.
import type WebSocket from "ws";
import type { Session } from "../../common/api.ts";
import type { WallScreen, WallServerMessage, WallSession } from "../../common/wall-protocol.ts";

/** What the wall needs of the console hub (and, with replicas, of console placement). */
export interface WallConsoles {
  /** Keeps the session's console open here; undefined when it cannot (another replica holds it). */
  keepOpen(session: Session): Promise<(() => void) | undefined>;
  /** The console's screen when it is open here. */
  screenOf(sessionId: string): { screenVersion: number; screenText(): WallScreenText } | undefined;
}

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
  screenIntervalMs: number;
  listIntervalMs: number;
  /** Above this many unsent bytes a tick sends no screens (the next one sends the newest). */
  maxBufferedBytes: number;
  log: { warn(object: object, message: string): void };
}

// With replicas, a console another one holds is asked about again this often (a lease look-up).
const askElsewhereAgainMs = 30_000;

/** Sessions with a console worth showing. */
const shownStatuses = new Set<Session["status"]>(["starting", "running", "failed"]);

export class WallStream {
  /** Per running session: how to let its console go, or when another replica was found to hold it. */
  private readonly kept = new Map<string, { release: () => void } | { elsewhereSince: number }>();
  private readonly sentVersions = new Map<string, number>();
  private sessions: Session[] = [];
  private lastList = "";
  private screenTimer: NodeJS.Timeout | undefined;
  private listTimer: NodeJS.Timeout | undefined;
  private refreshing = false;
  private closed = false;

  constructor(private readonly deps: WallStreamDeps) {
    deps.socket.on("close", () => this.close());
  }

  start(): void {
    void this.refreshList();
    this.screenTimer = setInterval(() => this.sendScreens(), this.deps.screenIntervalMs);
    this.listTimer = setInterval(() => void this.refreshList(), this.deps.listIntervalMs);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.screenTimer);
    clearInterval(this.listTimer);
    for (const entry of this.kept.values()) if ("release" in entry) entry.release();
    this.kept.clear();
    if (this.deps.socket.readyState === this.deps.socket.OPEN) this.deps.socket.close(1000);
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
      const items: WallSession[] = await Promise.all(
        sessions.map(async (session) => ({
          sessionId: session.id,
          owner: session.owner,
          status: session.status,
          expiresAt: session.expiresAt,
          help: session.help ?? null,
          score: await this.deps.lastScore(session.id),
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
          ? !this.deps.consoles.screenOf(id)
          : now - entry.elsewhereSince >= askElsewhereAgainMs;
      if (!running.has(id) || stale) {
        if ("release" in entry) entry.release();
        this.kept.delete(id);
        this.sentVersions.delete(id);
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

  private sendScreens(): void {
    if (this.closed || this.deps.socket.bufferedAmount > this.deps.maxBufferedBytes) return;
    const screens: WallScreen[] = [];
    for (const id of this.kept.keys()) {
      const screen = this.deps.consoles.screenOf(id);
      if (!screen || this.sentVersions.get(id) === screen.screenVersion) continue;
      this.sentVersions.set(id, screen.screenVersion);
      screens.push({ sessionId: id, ...screen.screenText() });
    }
    if (screens.length > 0) this.send({ type: "screens", screens });
  }

  private send(message: WallServerMessage): void {
    if (this.deps.socket.readyState === this.deps.socket.OPEN) this.deps.socket.send(JSON.stringify(message));
  }
}
