// The BFF in a process of its own for bench/soak.ts, started as `npm start` starts it (startServer,
// configuration from the environment), with probes the soak reads over IPC: event-loop delay, RSS,
// and the time each request spent inside the BFF, by route.
//   parent -> child: "measure" (start the window), "report" (end it and answer), "stop"
import { monitorEventLoopDelay } from "node:perf_hooks";
import { loadConfig } from "../src/server/config.ts";
import { startServer } from "../src/server/start.ts";
import { routeOf } from "./soak-routes.ts";

export interface SoakBffReport {
  type: "report";
  /** Milliseconds inside the BFF per request, by route ("GET /api/sessions/:id"). */
  serverMs: Record<string, number[]>;
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  rssMb: { start: number; max: number; end: number };
  cpuSeconds: number;
  consoles: { consoles: number; connectedUpstreams: number; viewers: number };
}

export type SoakBffMessage = { type: "ready"; url: string } | SoakBffReport;

const send = (message: SoakBffMessage) => process.send?.(message);

const server = await startServer(loadConfig({ env: process.env, inCluster: false }), { serveWeb: false });
const mb = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 10) / 10;

let serverMs: Record<string, number[]> = {};
server.app.server.on("request", (request, response) => {
  const arrivedAt = performance.now();
  response.once("finish", () => {
    const route = routeOf(request.method ?? "GET", request.url ?? "/");
    (serverMs[route] ??= []).push(performance.now() - arrivedAt);
  });
});

// The histogram holds the time between samples, the resolution included: the lag is what exceeds it.
const resolutionMs = 10;
const delay = monitorEventLoopDelay({ resolution: resolutionMs });
const lagMs = (nanoseconds: number) => Math.max(0, nanoseconds / 1e6 - resolutionMs);
let rss = { start: 0, max: 0 };
let cpuAtStart = process.cpuUsage();
const rssSampler = setInterval(() => {
  rss.max = Math.max(rss.max, process.memoryUsage.rss());
}, 250);
rssSampler.unref();

send({ type: "ready", url: server.url });

process.on("message", (message) => {
  if (message === "measure") {
    serverMs = {};
    delay.reset();
    delay.enable();
    const now = process.memoryUsage.rss();
    rss = { start: now, max: now };
    cpuAtStart = process.cpuUsage();
  } else if (message === "report") {
    delay.disable();
    const cpu = process.cpuUsage(cpuAtStart);
    send({
      type: "report",
      serverMs,
      eventLoopDelayMs: {
        p50: lagMs(delay.percentile(50)),
        p99: lagMs(delay.percentile(99)),
        max: lagMs(delay.max),
      },
      rssMb: { start: mb(rss.start), max: mb(rss.max), end: mb(process.memoryUsage.rss()) },
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      consoles: server.app.consoleHub.stats(),
    });
  } else if (message === "stop") {
    void server.close().then(() => process.exit(0));
  }
});
