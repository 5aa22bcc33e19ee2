// A class wall as the SPA opens it, over a real websocket, for tests and the bench: it keeps the
// latest session list, each session's latest screen and the latest answer to its search.
import type WebSocket from "ws";
import {
  WallServerMessage,
  type WallClientMessage,
  type WallDesktop,
  type WallMatch,
  type WallScreen,
  type WallSearch,
  type WallSession,
} from "../../../common/wall-protocol.ts";
import {
  opened,
  openBrowserSocket,
  refusedUpgradeStatus,
  type BrowserSocketOptions,
} from "../../testing/browser-socket.ts";

function socketFor(baseUrl: string, labId: string, options: BrowserSocketOptions): WebSocket {
  return openBrowserSocket(baseUrl, `/api/labs/${encodeURIComponent(labId)}/wall`, options);
}

/** The HTTP status with which the BFF refused the wall (fails if it accepted). */
export function refusedWallStatus(
  baseUrl: string,
  labId: string,
  options: BrowserSocketOptions,
): Promise<number> {
  return refusedUpgradeStatus(socketFor(baseUrl, labId, options));
}

export class WallTestClient {
  sessions: WallSession[] = [];
  readonly screens = new Map<string, WallScreen>();
  /** Each graphical session's latest miniature, and how many were sent. */
  readonly desktops = new Map<string, WallDesktop>();
  desktopsReceived = 0;
  /** The latest `matches` or `search-refused` frame. */
  answer: Extract<WallServerMessage, { type: "matches" | "search-refused" }> | undefined;
  /** Why the BFF did not open this wall, when it did not. */
  refused: Extract<WallServerMessage, { type: "refused" }> | undefined;
  /** How the BFF closed the socket, once it did. */
  closedWith: { code: number; reason: string } | undefined;
  /** Bytes and frames received. */
  bytes = 0;
  frames = 0;
  private readonly checks = new Set<() => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data: Buffer) => {
      this.bytes += data.length;
      this.frames += 1;
      const message = WallServerMessage.parse(JSON.parse(data.toString("utf8")));
      if (message.type === "sessions") this.sessions = message.items;
      else if (message.type === "screens") {
        for (const screen of message.screens) this.screens.set(screen.sessionId, screen);
      } else if (message.type === "desktops") {
        for (const desktop of message.desktops) this.desktops.set(desktop.sessionId, desktop);
        this.desktopsReceived += message.desktops.length;
      } else if (message.type === "refused") {
        this.refused = message;
      } else {
        this.answer = message;
      }
      for (const check of [...this.checks]) check();
    });
    socket.on("close", (code: number, reason: Buffer) => {
      this.closedWith = { code, reason: reason.toString("utf8") };
      for (const check of [...this.checks]) check();
    });
    socket.on("error", () => {});
  }

  static async connect(
    baseUrl: string,
    labId: string,
    options: BrowserSocketOptions,
  ): Promise<WallTestClient> {
    const socket = socketFor(baseUrl, labId, options);
    // Listening before the upgrade completes: the first frame may arrive in the same read as it.
    const client = new WallTestClient(socket);
    await opened(socket, `the wall of ${labId}`);
    return client;
  }

  search(search: WallSearch): void {
    this.sendRaw(JSON.stringify({ type: "search", search } satisfies WallClientMessage));
  }

  /** Sends a frame as it is, for tests of what the BFF refuses. */
  sendRaw(data: string | Buffer): void {
    this.socket.send(data, { binary: Buffer.isBuffer(data) });
  }

  /** The matches of the latest answer when it answers `search`, by session; undefined otherwise. */
  matchesFor(search: WallSearch): Map<string, WallMatch> | undefined {
    const answer = this.answer;
    if (answer?.type !== "matches" || JSON.stringify(answer.search) !== JSON.stringify(search))
      return undefined;
    return new Map(answer.matches.map((match) => [match.sessionId, match]));
  }

  session(sessionId: string): WallSession | undefined {
    return this.sessions.find((session) => session.sessionId === sessionId);
  }

  /** Resolves once `condition` holds after some frame (or at once). */
  until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.checks.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.checks.delete(check);
        reject(new Error(`the wall never showed ${what}`));
      }, timeoutMs);
      this.checks.add(check);
    });
  }

  close(): void {
    this.socket.close();
  }
}
