// Websocket upgrades go through fastify's router like any request, so hooks, cookies, params and
// error answers all work as usual; a route takes the socket with acceptWebsocket. Whatever a route
// answers instead (401, 403, 404...) is written on the socket as plain HTTP, which then closes.
import { ServerResponse, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { WebSocket, WebSocketServer } from "ws";

interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
}

const pendingUpgrades = new WeakMap<IncomingMessage, PendingUpgrade>();

export function routeWebsocketUpgrades(app: FastifyInstance): void {
  app.server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Until ws owns the socket, a reset must not become an unhandled error.
    socket.on("error", () => socket.destroy());
    pendingUpgrades.set(request, { socket, head });
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket as Socket);
    // No HTTP server drives this response: once a refusal is written, close the connection ourselves.
    response.on("finish", () => socket.end());
    app.routing(request, response);
  });
}

export function isWebsocketUpgrade(request: FastifyRequest): boolean {
  return pendingUpgrades.has(request.raw);
}

/**
 * Completes the handshake; fastify stops handling the request. Undefined when the handshake itself
 * was malformed (ws answered 400 and closed the connection).
 */
export function acceptWebsocket(
  request: FastifyRequest,
  reply: FastifyReply,
  server: WebSocketServer,
): Promise<WebSocket | undefined> {
  const upgrade = pendingUpgrades.get(request.raw);
  if (!upgrade) throw new Error("acceptWebsocket called for a request that asked for no upgrade");
  pendingUpgrades.delete(request.raw);
  reply.hijack();
  return new Promise((resolve) => {
    upgrade.socket.once("close", () => resolve(undefined));
    server.handleUpgrade(request.raw, upgrade.socket, upgrade.head, resolve);
  });
}
