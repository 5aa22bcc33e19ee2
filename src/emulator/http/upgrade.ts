// Websocket upgrades on KubeVirt's streaming subresources (console, portforward, ...). Requests are
// authenticated and authorized like any other; a table maps `resource/subresource` to a handler.
// Without a handler the answer is the API server's 404 Status, written on the raw socket.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { UserInfo } from "../rbac/attributes.ts";
import type { ResourceRequestInfo } from "./request-info.ts";
import type { ApiError } from "./status.ts";

export interface UpgradeContext {
  request: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  info: ResourceRequestInfo;
  user: UserInfo;
}

/** Throws (or rejects with) an ApiError to refuse the upgrade; must not throw once it has upgraded. */
export type UpgradeHandler = (context: UpgradeContext) => void | Promise<void>;

export class UpgradeRoutes {
  private readonly handlers = new Map<string, UpgradeHandler>();

  /** `key` is `virtualmachineinstances/console`, `virtualmachineinstances/portforward`, ... */
  register(key: string, handler: UpgradeHandler): void {
    this.handlers.set(key, handler);
  }

  find(info: ResourceRequestInfo): UpgradeHandler | undefined {
    return this.handlers.get(`${info.resource}/${info.subresource}`);
  }
}

const reasonPhrases: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  429: "Too Many Requests",
  500: "Internal Server Error",
};

/** Refuses an upgrade with a JSON Status, then closes the socket. */
export function rejectUpgrade(socket: Duplex, error: ApiError | { code: number; body: unknown }): void {
  const body = JSON.stringify("toStatus" in error ? error.toStatus() : error.body);
  writeRawResponse(socket, error.code, { "Content-Type": "application/json" }, body);
}

/** An HTTP response written on a socket that never reached the HTTP server's response object. */
export function writeRawResponse(
  socket: Duplex,
  code: number,
  headers: Record<string, string>,
  body: string,
): void {
  const lines = Object.entries({ ...headers, "Content-Length": String(Buffer.byteLength(body)) }).map(
    ([name, value]) => `${name}: ${value}\r\n`,
  );
  socket.end(
    `HTTP/1.1 ${code} ${reasonPhrases[code] ?? "Error"}\r\n${lines.join("")}Connection: close\r\n\r\n${body}`,
  );
}
