// Every TCP connection of the server, including ones still in the TLS handshake or upgraded to
// websockets, so that close() and the "API server restarted" fault can drop them all. While a drop's
// down time lasts, new connections are reset at once (clients see ECONNRESET).
import type { Server } from "node:https";
import type { Socket } from "node:net";

export interface DropOptions {
  /** For this long afterwards, new connections are reset too. */
  forMs?: number;
  /** A connection to leave open (the one asking for the drop), by its client's address and port. */
  keep?: { remoteAddress?: string | undefined; remotePort?: number | undefined };
}

/** What a test of the clients' connection reuse reads. */
export interface ConnectionStats {
  /** TCP connections clients opened since the server started, reset ones included. */
  opened: number;
  /** Connections open now. */
  open: number;
}

export class Connections {
  private readonly sockets = new Set<Socket>();
  private opened = 0;
  private downUntil = 0;
  private downTimer: NodeJS.Timeout | undefined;

  constructor(server: Server) {
    server.on("connection", (socket: Socket) => this.accept(socket));
  }

  /** Drops every connection (except `keep`); returns how many. */
  drop(options: DropOptions = {}): number {
    const { forMs = 0, keep } = options;
    if (forMs > 0) this.refuseFor(forMs);
    let dropped = 0;
    for (const socket of this.sockets) {
      if (keep && socket.remotePort === keep.remotePort && socket.remoteAddress === keep.remoteAddress)
        continue;
      socket.destroy();
      dropped += 1;
    }
    return dropped;
  }

  /** Resets new connections for `ms` from now. */
  refuseFor(ms: number): void {
    clearTimeout(this.downTimer);
    this.downUntil = Date.now() + ms;
    this.downTimer = setTimeout(() => this.up(), ms);
  }

  /** Ends a down time early. */
  up(): void {
    clearTimeout(this.downTimer);
    this.downTimer = undefined;
    this.downUntil = 0;
  }

  stats(): ConnectionStats {
    return { opened: this.opened, open: this.sockets.size };
  }

  closeAll(): void {
    this.up();
    for (const socket of this.sockets) socket.destroy();
  }

  private accept(socket: Socket): void {
    this.opened += 1;
    if (Date.now() < this.downUntil) {
      socket.resetAndDestroy();
      return;
    }
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
  }
}
