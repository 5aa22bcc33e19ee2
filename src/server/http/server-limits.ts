// How long the BFF waits for a client and how many connections it holds, so that slow or idle clients
// cannot hold its sockets and memory until nothing is left for the others: a
// request trickled in, a connection that never says anything and an answer nobody reads each end
// after a timeout, and one address cannot take more than its share of the connections. The numbers
// and their reasons are in docs/deploy.md ("Timeouts and connection limits").
import type { ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { addressKey } from "./client-address.ts";

export interface ServerLimits {
  /** The whole request, headers and body, must have arrived within this; else 408 and closed. */
  requestTimeoutMs: number;
  /** Its headers within this, counted from the connection's (or the request's) first byte. */
  headersTimeoutMs: number;
  /** A connection kept open for the next request is closed after this long without one. */
  keepAliveTimeoutMs: number;
  /**
   * A connection with no traffic for this long is closed, unless the BFF is still working on its
   * answer with nothing waiting to be sent (a self-check waits for its checks, minutes perhaps).
   */
  idleTimeoutMs: number;
  /** Connections open at once, all clients together; more are closed as they come. */
  maxConnections: number;
  /**
   * Connections open at once from one address (an IPv6 /64 counts as one), websockets included;
   * more are closed as they come. Trusted proxies, which carry everyone's, are not capped.
   */
  maxConnectionsPerAddress: number;
}

export const defaultServerLimits: ServerLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 20_000,
  // Longer than the 60 s a load balancer such as AWS's ALB keeps an idle connection: the proxy, not
  // the BFF, ends it, so the proxy never sends a request down a connection the BFF is closing.
  keepAliveTimeoutMs: 72_000,
  idleTimeoutMs: 60_000,
  maxConnections: 4096,
  maxConnectionsPerAddress: 1024,
};

/** The options fastify creates its server with. */
export function serverOptions(limits: ServerLimits): {
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionTimeout: number;
  http: ServerOptions;
} {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node looks for requests past their timeouts this often (30 s by default, which would let a
      // 30 s timeout run to a minute): a tenth of the shorter one, between 50 ms and 1 s.
      connectionsCheckingInterval: Math.min(
        1_000,
        Math.max(50, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 10)),
      ),
    },
  };
}

export interface ConnectionGuard {
  /** TRUST_PROXY's decision about the peer: trusted proxies are not capped. */
  isProxy(address: string): boolean;
  onRefused(reason: "per-address" | "total"): void;
  log: FastifyBaseLogger;
}

/** The connection caps and the idle rule, on the app's server (before it listens). */
export function limitConnections(app: FastifyInstance, limits: ServerLimits, guard: ConnectionGuard): void {
  const server = app.server;
  server.maxConnections = limits.maxConnections;
  server.on("drop", () => guard.onRefused("total"));

  const open = new Map<string, number>();
  // Said once a minute per address at most: an address at its cap may try again and again.
  const warnedAt = new Map<string, number>();
  // Before the HTTP server's own listener: a connection over the cap is closed before a byte of it is
  // read or parsed, the cheapest refusal there is.
  server.prependListener("connection", (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || guard.isProxy(address)) return;
    const key = addressKey(address);
    const count = open.get(key) ?? 0;
    if (count >= limits.maxConnectionsPerAddress) {
      socket.destroy();
      guard.onRefused("per-address");
      if (Date.now() - (warnedAt.get(key) ?? -Infinity) >= 60_000) {
        warnedAt.set(key, Date.now());
        guard.log.warn(
          { address: key, limit: limits.maxConnectionsPerAddress },
          "refusing connections from an address that holds as many as LAB_MAX_CONNECTIONS_PER_ADDRESS allows",
        );
      }
      return;
    }
    open.set(key, count + 1);
    socket.once("close", () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else {
        open.delete(key);
        warnedAt.delete(key);
      }
    });
  });

  // With a listener here Node no longer closes idle sockets itself: this decides. A socket is quiet
  // either because the BFF is still working on its answer (keep it) or because the client stopped
  // reading, sending or coming back (close it).
  const working = new WeakMap<Socket, number>();
  app.addHook("onRequest", async (request) => {
    working.set(request.raw.socket, (working.get(request.raw.socket) ?? 0) + 1);
  });
  app.addHook("onResponse", async (request) => {
    working.set(request.raw.socket, Math.max(0, (working.get(request.raw.socket) ?? 0) - 1));
  });
  server.on("timeout", (socket: Socket) => {
    if ((working.get(socket) ?? 0) > 0 && socket.writableLength === 0) return;
    socket.destroy();
  });
}
