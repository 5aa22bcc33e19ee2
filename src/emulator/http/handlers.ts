// The two ways a request reaches the emulator's HTTPS server: a plain request, or a websocket
// upgrade. Each layer in front of the API server (fault injection, the path prefix) takes the
// Handlers of the layer behind it and returns its own, so the server only ever sees the outermost.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";

export interface Handlers {
  onRequest(request: IncomingMessage, response: ServerResponse): void;
  onUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
}
