// A class wall as the SPA opens it, over a real websocket, for tests and the bench: it keeps the
// latest session list and each session's latest screen.
import type { IncomingMessage } from "node:http";
import WebSocket from "ws";
import { WallServerMessage, type WallScreen, type WallSession } from "../../../common/wall-protocol.ts";

export interface WallClientOptions {
  cookie?: string;
  /** Default: the BFF's own origin; null sends none. */
  origin?: string | null;
}

function socketFor(baseUrl: string, labId: string, options: WallClientOptions): WebSocket {
  const url = new URL(`/api/labs/${encodeURIComponent(labId)}/wall`, baseUrl);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const origin = options.origin === undefined ? new URL(baseUrl).origin : options.origin;
  return new WebSocket(url, {
    headers: { ...(options.cookie ? { cookie: options.cookie } : {}), ...(origin ? { origin } : {}) },
    perMessageDeflate: false,
  });
}

/** The HTTP status with which the BFF refused the wall (fails if it accepted). */
export function refusedWallStatus(
  baseUrl: string,
  labId: string,
  options: WallClientOptions,
): Promise<number> {
  const socket = socketFor(baseUrl, labId, options);
  return new Promise((resolve, reject) => {
    socket.on("unexpected-response", (request: { destroy(): void }, response: IncomingMessage) => {
      request.destroy();
      resolve(response.statusCode ?? 0);
    });
    socket.on("open", () => {
      socket.terminate();
      reject(new Error("the wall accepted a connection it should have refused"));
    });
    socket.on("error", () => {});
  });
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

  static connect(baseUrl: string, labId: string, options: WallClientOptions): Promise<WallTestClient> {
    const socket = socketFor(baseUrl, labId, options);
    return new Promise((resolve, reject) => {
      socket.once("open", () => resolve(new WallTestClient(socket)));
      socket.once("unexpected-response", (_request, response: IncomingMessage) =>
        reject(new Error(`the wall refused the connection: HTTP ${response.statusCode}`)),
      );
      socket.once("error", reject);
    });
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
