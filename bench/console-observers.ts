// Staff observing one console, a few in a process of their own, for bench/console.ts's fan-out
// (support/fan-out.ts forks as many as it needs). In the bench's process, nine more clients receiving
// and acking a flood would share one event loop with the owner's client and the bench's bookkeeping;
// an observer that falls more than 4 MiB behind is dropped by the BFF, and the bench would measure
// its own clients instead of the BFF.
//   environment: OBSERVE_URL (the BFF), OBSERVE_SESSION (the session), OBSERVE_COOKIES (a JSON array
//   of sign-in cookies, one for each observer, each a different person: one person may hold only a few
//   sockets on one console).
//   parent -> child: "open" (each observer opens the console read-only, as the SPA does with
//   ?mode=observe, and acks as it does; answered with "opened" once every one has its replay and a
//   connected console), "close" (answered with "closed": what each received since "opened", whether
//   the BFF dropped it or caught it up by replay, and this process's CPU and longest event-loop delay
//   meanwhile) or "stop".
import { monitorEventLoopDelay } from "node:perf_hooks";
import { consoleCloseCodes } from "../src/common/console-protocol.ts";
import { openRelay, type RelayLine } from "./support/console-lines.ts";

export interface ObserverRun {
  bytes: number;
  /** Closed by the BFF as too slow (4008). */
  dropped: boolean;
  /** Screens replayed after the first. */
  catchUps: number;
}

export type ObserversMessage =
  | { type: "ready" }
  | { type: "opened" }
  | {
      type: "closed";
      observers: ObserverRun[];
      /** This process over the run: its longest event-loop delay, and its CPU. */
      stalledMs: number;
      cpuMs: number;
    };

const send = (message: ObserversMessage) => process.send?.(message);

const url = process.env.OBSERVE_URL ?? "";
const sessionId = process.env.OBSERVE_SESSION ?? "";
const cookies = JSON.parse(process.env.OBSERVE_COOKIES ?? "[]") as string[];

interface Observer {
  relay: RelayLine;
  received: number;
  dropped: boolean;
}

let observers: Observer[] = [];
const delay = monitorEventLoopDelay({ resolution: 10 });
let cpuAtOpen = process.cpuUsage();

async function open(): Promise<void> {
  observers = await Promise.all(
    cookies.map(async (cookie) => {
      const relay = await openRelay(url, cookie, sessionId, { mode: "observe", patient: true });
      const observer: Observer = { relay, received: 0, dropped: false };
      relay.line.onData((chunk) => (observer.received += chunk.length));
      relay.socket.once("close", (code) => (observer.dropped = code === consoleCloseCodes.tooSlow));
      return observer;
    }),
  );
  // The replays are not part of the run.
  for (const observer of observers) observer.received = 0;
  delay.reset();
  delay.enable();
  cpuAtOpen = process.cpuUsage();
  send({ type: "opened" });
}

async function close(): Promise<void> {
  delay.disable();
  const { user, system } = process.cpuUsage(cpuAtOpen);
  await Promise.all(observers.map((observer) => observer.relay.line.close()));
  send({
    type: "closed",
    stalledMs: delay.max / 1e6,
    cpuMs: (user + system) / 1000,
    observers: observers.map(({ relay, received, dropped }) => ({
      bytes: received,
      dropped,
      catchUps: relay.catchUps(),
    })),
  });
  observers = [];
}

const fail = (error: unknown) => {
  console.error("console-observers.ts:", error);
  process.exit(1);
};

process.on("message", (message) => {
  if (message === "open") open().catch(fail);
  else if (message === "close") close().catch(fail);
  else if (message === "stop") process.exit(0);
});
send({ type: "ready" });
