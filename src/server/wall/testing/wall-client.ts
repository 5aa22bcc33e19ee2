// A class wall as the SPA opens it, over a real websocket, for tests and the bench: it keeps the
// latest session list and each session's latest screen.
import type WebSocket from "ws";
import { WallServerMessage, type WallScreen, type WallSession } from "../../../common/wall-protocol.ts";
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
      else for (const screen of message.screens) this.screens.set(screen.sessionId, screen);
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
