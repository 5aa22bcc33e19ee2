// A websocket opened the way a browser opens one to the BFF, for tests and the bench: the session
// cookie and the page's Origin go with the upgrade, so the BFF's checks see what they see in production.
import type { IncomingMessage } from "node:http";
import WebSocket from "ws";

export interface BrowserSocketOptions {
  /** The `lab_sign_in=...` cookie; none to play a browser that is not signed in. */
  cookie?: string;
  /** Default: the BFF's own origin; null sends none. */
  origin?: string | null;
  /** Answer pings, as browsers do; false plays a connection that died silently. */
  answerPings?: boolean;
}

/** `path` may carry a query; the scheme follows the BFF's (ws: or wss:). */
export function openBrowserSocket(baseUrl: string, path: string, options: BrowserSocketOptions): WebSocket {
  const url = new URL(path, baseUrl);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const origin = options.origin === undefined ? new URL(baseUrl).origin : options.origin;
  return new WebSocket(url, {
    headers: { ...(options.cookie ? { cookie: options.cookie } : {}), ...(origin ? { origin } : {}) },
    perMessageDeflate: false,
    autoPong: options.answerPings ?? true,
  });
}

/** The HTTP status with which the BFF refused this socket's upgrade; rejects if it was accepted. */
export function refusedUpgradeStatus(socket: WebSocket): Promise<number> {
  return new Promise((resolve, reject) => {
    socket.on("unexpected-response", (request: { destroy(): void }, response: IncomingMessage) => {
      request.destroy();
      resolve(response.statusCode ?? 0);
    });
    socket.on("open", () => {
      socket.terminate();
      reject(new Error(`${socket.url} accepted a connection it should have refused`));
    });
    socket.on("error", () => {});
  });
}

/** Resolves once the upgrade was accepted; rejects with the status when the BFF refused it. */
export function opened(socket: WebSocket, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("unexpected-response", (_request, response: IncomingMessage) =>
      reject(new Error(`the BFF refused ${what}: HTTP ${response.statusCode}`)),
    );
    socket.once("error", reject);
  });
}
