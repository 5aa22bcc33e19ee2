// A TCP proxy in front of PostgreSQL that can stop forwarding without closing anything: what a
// dropped network looks like to the console (no error, no reset, just no answer).
import { connect, createServer, type Server, type Socket } from "node:net";

export interface StallingProxy {
  /** The database URL, pointed at the proxy. */
  url: string;
  /** From now on nothing goes through, either way; connections stay open. */
  stall(): void;
  close(): Promise<void>;
}

export async function startStallingProxy(databaseUrl: string): Promise<StallingProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let stalled = false;
  const keep = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    return socket;
  };
  const server: Server = createServer((client) => {
    keep(client);
    if (stalled) return;
    const upstream = keep(connect(Number(target.port || 5432), target.hostname || "127.0.0.1"));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxied = new URL(databaseUrl);
  proxied.hostname = "127.0.0.1";
  proxied.port = String((server.address() as { port: number }).port);
  return {
    url: proxied.toString(),
    stall() {
      stalled = true;
      for (const socket of sockets) {
        socket.unpipe();
        socket.pause();
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
