// The BFF in a process of its own for bench/console.ts and bench/vnc.ts, so that its memory and CPU
// are measured apart from the bench's clients: started as `npm start` starts it (startServer),
// against the bench's emulator. Parent -> child: "stats" (the console hub's counts), "memory"
// (process.memoryUsage() after a full GC, with the counts), "delay" (the event loop's delay since the
// last "delay"; the first starts measuring it), "cpu" (the CPU time the process used so far, as
// bare-pipe.ts answers it: support/cpu-ipc.ts) or "stop".
import { monitorEventLoopDelay } from "node:perf_hooks";
import { loadConfig } from "../src/server/config.ts";
import { startServer } from "../src/server/start.ts";
import { answeredCpu, type CpuMessage } from "./support/cpu-ipc.ts";

type HubStats = ReturnType<Awaited<ReturnType<typeof startServer>>["app"]["consoleHub"]["stats"]>;

export type BffMessage =
  | { type: "ready"; url: string }
  | { type: "stats"; consoles: HubStats }
  | { type: "memory"; usage: NodeJS.MemoryUsage; consoles: HubStats }
  | { type: "delay"; p50Ms: number; p99Ms: number; maxMs: number }
  | CpuMessage;

const send = (message: BffMessage) => process.send?.(message);

const server = await startServer(loadConfig({ env: process.env, inCluster: false }), { serveWeb: false });
send({ type: "ready", url: server.url });

// Started at the first "delay": its 1 ms timer costs about 20 ms of CPU a second, which the relay's
// CPU per MB measured before it would count.
let delay: ReturnType<typeof monitorEventLoopDelay> | undefined;

process.on("message", (message) => {
  if (answeredCpu(message)) return;
  if (message === "stats") {
    send({ type: "stats", consoles: server.app.consoleHub.stats() });
  } else if (message === "memory") {
    // Twice: the first pass may leave finalizable objects the second one frees.
    globalThis.gc?.();
    globalThis.gc?.();
    send({ type: "memory", usage: process.memoryUsage(), consoles: server.app.consoleHub.stats() });
  } else if (message === "delay") {
    if (!delay) {
      delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
    }
    const ms = (nanoseconds: number) => nanoseconds / 1e6;
    send({
      type: "delay",
      p50Ms: ms(delay.percentile(50)),
      p99Ms: ms(delay.percentile(99)),
      maxMs: ms(delay.max),
    });
    delay.reset();
  } else if (message === "stop") {
    void server.close().then(() => process.exit(0));
  }
});
