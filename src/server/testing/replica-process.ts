// One BFF replica as a process of its own, for the multi-replica tests and the bench: startServer
// with the configuration from the environment (as `npm start` runs it, minus building the SPA),
// then answers its parent over IPC. Dies with its parent.
import { detectInCluster, loadConfig } from "../config.ts";
import { startServer } from "../start.ts";

export type ReplicaRequest = { type: "stats" };
export type ReplicaMessage =
  | { type: "ready"; url: string; identity: string }
  | {
      type: "stats";
      consoles: { consoles: number; connectedUpstreams: number; viewers: number };
      /** After a full garbage collection. */
      memory: NodeJS.MemoryUsage;
    };

function send(message: ReplicaMessage): void {
  process.send?.(message);
}

const config = loadConfig({ env: process.env, inCluster: detectInCluster(process.env) });
const server = await startServer(config, { serveWeb: false });
send({ type: "ready", url: server.url, identity: server.app.coordination.identity });

process.on("message", (request: ReplicaRequest) => {
  if (request.type === "stats") {
    // Twice (with --expose-gc): the first pass may leave finalizable objects the second one frees.
    globalThis.gc?.();
    globalThis.gc?.();
    send({ type: "stats", consoles: server.app.consoleHub.stats(), memory: process.memoryUsage() });
  }
});
process.on("disconnect", () => process.exit(1));
process.once("SIGTERM", () => {
  void server.close().finally(() => process.exit(0));
});
