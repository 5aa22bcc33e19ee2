// What the console relay costs, side by side in one run:
//  - the BFF's CPU per MB relayed against a bare pipe's (bare-pipe.ts, the floor: a Node process that
//    only forwards websocket frames), with the same client straight to the emulator's console
//    subresource (as KubeVirt serves it) beside them, for text, for `yes`, and for a lab terminal
//    (support/relay-cost.ts);
//  - fan-out: the BFF's CPU per MB with ten viewers of one console (the owner and nine staff
//    observing) against the owner alone (support/fan-out.ts);
//  - keystroke echo latency p50/p99, both ways;
//  - while another VM floods its console with `yes`: echo latency, and how long Ctrl-C takes to
//    bring the prompt back;
//  - the BFF's event-loop delay while a student floods their socket with "fit the guest" messages
//    (a screen resize each, once), against the same seconds without the flood;
//  - the BFF's memory with 100 open consoles (idle, then each with a full scrollback: right after
//    printing it, and once quiet long enough for the scrollback to be archived).
//
//   npm run bench:console [-- OPTIONS]
//     --megabytes 50      guest output a run, in the relay-cost and fan-out comparisons
//     --runs 3            measured rounds of each comparison, after one warm-up round
//     --viewers 10        viewers of one console in the fan-out: the owner and N - 1 staff
//     --echoes 400        keystrokes echoed each way
//     --flood-seconds 5   how long each phase of the fit-guest flood lasts
//     --consoles 100      consoles open for the memory measurement
//     --memory-only       only the memory measurement
//
// The emulator, the BFF, the bare pipe and the fan-out's observers run as processes of their own (the
// BFF as with `npm start`); the other clients run here and only count bytes, acknowledging them as
// the SPA does once xterm.js has written them.
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import type { KubeConfig } from "@kubernetes/client-node";
import { defaultConsoleLimits } from "../src/server/console/limits.ts";
import { signInCookie } from "../src/server/console/testing/console-client.ts";
import type { ClusterClient } from "../src/server/kube/client.ts";
import type { BarePipeMessage } from "./bare-pipe.ts";
import type { BffMessage } from "./console-bff.ts";
import { launchRunningSessions, startBenchCluster } from "./support/bench-cluster.ts";
import { forkBff } from "./support/bff-process.ts";
import {
  atPrompt,
  openDirect,
  openRelay,
  prompt,
  viewersDownTo,
  waitForText,
  type ConsoleBff,
  type Line,
  type RelayLine,
} from "./support/console-lines.ts";
import { measureFanOut, reportFanOut, staffNames, writeUsersWithStaff } from "./support/fan-out.ts";
import { measureRelayCost, reportRelayCost, type Producer } from "./support/relay-cost.ts";
import { mb } from "./support/spread.ts";

const usage = `npm run bench:console [-- --megabytes 50 --runs 3 --viewers 10 --echoes 400 --flood-seconds 5 --consoles 100]
npm run bench:console -- --memory-only [--consoles 100]

  --megabytes N      guest output a run, in the relay-cost and fan-out comparisons
  --runs N           measured rounds of each comparison, after one warm-up round
  --viewers N        viewers of one console in the fan-out: the owner and N - 1 staff observing
  --echoes N         keystrokes echoed each way
  --flood-seconds N  how long each phase of the fit-guest flood lasts
  --consoles N       consoles open for the memory measurement
  --memory-only      only the memory measurement`;

const { values: args } = parseArgs({
  options: {
    megabytes: { type: "string", default: "50" },
    runs: { type: "string", default: "3" },
    viewers: { type: "string", default: "10" },
    echoes: { type: "string", default: "400" },
    consoles: { type: "string", default: "100" },
    "flood-seconds": { type: "string", default: "5" },
    "memory-only": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (args.help) {
  console.log(usage);
  process.exit(0);
}
const outputBytes = Number(args.megabytes) * 1024 * 1024;
const runs = Number(args.runs);
const viewerCount = Number(args.viewers);
const echoCount = Number(args.echoes);
const consoleCount = Number(args.consoles);
const floodSeconds = Number(args["flood-seconds"]);

const text: Producer = {
  label: "text, 78-char lines",
  command: `base64 -w 78 /dev/urandom | head -c ${outputBytes}`,
  goalVsBare: 1.5,
};
const yes: Producer = { label: "`yes`, 2-byte lines", command: `yes | head -c ${outputBytes}` };

async function echoLatencies(line: Line, count: number): Promise<number[]> {
  await atPrompt(line);
  const samples: number[] = [];
  const warmup = 20;
  for (let index = 0; index < count + warmup; index += 1) {
    const echoed = new Promise<void>((resolve) => {
      const stop = line.onData(() => {
        stop();
        resolve();
      });
    });
    const started = performance.now();
    // A letter, then a backspace: the line never grows.
    line.send(index % 2 === 0 ? "x" : "\x7f");
    await echoed;
    if (index >= warmup) samples.push(performance.now() - started);
  }
  return samples;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

// The BFF, a process of its own

const agentSecret = "bench-console-agent-secret-bench-console-agent";

function startBff(kubeconfigPath: string, dataDir: string): Promise<ConsoleBff> {
  return forkBff<BffMessage>("console-bff.ts", {
    kubeconfigPath,
    env: { DATA_DIR: dataDir, AGENT_TOKEN_SECRET: agentSecret },
    execArgv: ["--expose-gc"],
  });
}

// The measurements

async function measureEcho(
  kubeConfig: KubeConfig,
  bff: ConsoleBff,
  cookie: string,
  sessionId: string,
): Promise<{ direct: number[]; relay: number[] }> {
  const direct: number[] = [];
  const relay: number[] = [];
  const rounds = 4;
  for (let round = 0; round < rounds; round += 1) {
    const straight = await openDirect(kubeConfig, sessionId);
    direct.push(...(await echoLatencies(straight, Math.ceil(echoCount / rounds))));
    await straight.close();
    const { line } = await openRelay(bff.url, cookie, sessionId, { patient: true });
    relay.push(...(await echoLatencies(line, Math.ceil(echoCount / rounds))));
    await line.close();
    await viewersDownTo(bff, 0);
  }
  return { direct, relay };
}

async function measureFlood(
  bffUrl: string,
  cookie: string,
  flooding: string,
  quiet: string,
): Promise<{ echo: number[]; ctrlCMs: number; floodMb: number }> {
  const { line: flood } = await openRelay(bffUrl, cookie, flooding);
  const { line: other } = await openRelay(bffUrl, cookie, quiet);
  await atPrompt(flood);
  let flooded = 0;
  const stopCounting = flood.onData((chunk) => (flooded += chunk.length));
  flood.send("yes\r");
  await waitForText(flood, "y\r\ny\r\ny\r\n");
  const echo = await echoLatencies(other, echoCount);
  const backAtPrompt = waitForText(flood, prompt, 30_000);
  const started = performance.now();
  flood.send("\x03");
  await backAtPrompt;
  const ctrlCMs = performance.now() - started;
  stopCounting();
  await Promise.all([flood.close(), other.close()]);
  return { echo, ctrlCMs, floodMb: mb(flooded) };
}

interface LoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * The BFF's event-loop delay while another VM's console is typed into, first quietly, then while
 * its owner sends fit-guest frames as fast as a script can (reconnecting whenever the BFF closes
 * the socket), with a full scrollback so that every resize the BFF lets through costs the most.
 */
async function measureFitFlood(
  bff: ConsoleBff,
  cookie: string,
  flooding: string,
  quiet: string,
): Promise<{
  quiet: LoopDelay;
  flood: LoopDelay;
  framesSent: number;
  socketsClosed: number;
  refusedAttaches: number;
}> {
  const { line: filler } = await openRelay(bff.url, cookie, flooding);
  const filled = waitForText(filler, "fill-done");
  filler.send("seq 1 3000; echo fill''-done\r");
  await filled;
  await filler.close();
  await viewersDownTo(bff, 0);

  const { line: other } = await openRelay(bff.url, cookie, quiet);
  const typeFor = async (seconds: number) => {
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) await echoLatencies(other, 20);
  };
  await bff.ask("delay", "delay");
  await typeFor(floodSeconds);
  const quietDelay = await bff.ask("delay", "delay");

  let framesSent = 0;
  let socketsClosed = 0;
  let refusedAttaches = 0;
  let keepFlooding = true;
  const flood = async () => {
    while (keepFlooding) {
      const relay = await openRelay(bff.url, cookie, flooding).catch(() => undefined);
      if (!relay) {
        // Reopened too often: the BFF refuses the upgrade (429) until the allowance refills.
        refusedAttaches += 1;
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      const { socket } = relay;
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      let open = true;
      void closed.then(() => (open = false));
      while (open && keepFlooding) {
        for (let burst = 0; burst < 50 && open; burst += 1) {
          const wide = framesSent % 2 === 0;
          socket.send(JSON.stringify({ type: "fit-guest", cols: wide ? 120 : 100, rows: wide ? 40 : 30 }));
          framesSent += 1;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      if (open) socket.close();
      else socketsClosed += 1;
      await closed;
    }
  };
  const flooder = flood();
  await typeFor(floodSeconds);
  const floodDelay = await bff.ask("delay", "delay");
  keepFlooding = false;
  await flooder;
  await other.close();
  await viewersDownTo(bff, 0);
  const pick = ({ p50Ms, p99Ms, maxMs }: LoopDelay): LoopDelay => ({ p50Ms, p99Ms, maxMs });
  return { quiet: pick(quietDelay), flood: pick(floodDelay), framesSent, socketsClosed, refusedAttaches };
}

async function measureMemory(
  kubeconfigPath: string,
  dataDir: string,
  cluster: ClusterClient,
  existing: string[],
): Promise<{ label: string; rss: number; heap: number; external: number; viewers: number }[]> {
  const more = await launchRunningSessions(
    cluster,
    Array.from({ length: Math.max(0, consoleCount - existing.length) }, (_, index) => `student-${index}`),
  );
  const sessions = [...existing, ...more].slice(0, consoleCount);
  const bff = await startBff(kubeconfigPath, dataDir);
  try {
    const tara = await signInCookie(bff.url, "tara");
    const rows: { label: string; rss: number; heap: number; external: number; viewers: number }[] = [];
    const sample = async (label: string) => {
      const { usage, consoles } = await bff.ask("memory", "memory");
      rows.push({
        label,
        rss: mb(usage.rss),
        heap: mb(usage.heapUsed),
        // Node counts its buffers (arrayBuffers) in external.
        external: mb(usage.external),
        viewers: consoles.viewers,
      });
    };
    await sample("no console open");

    const lines: RelayLine[] = [];
    for (let start = 0; start < sessions.length; start += 10) {
      lines.push(
        ...(await Promise.all(
          sessions.slice(start, start + 10).map((id) => openRelay(bff.url, tara, id, { mode: "observe" })),
        )),
      );
    }
    await sample(`${sessions.length} consoles, idle`);

    // A TA takes each keyboard and prints more than the BFF keeps (1,000 lines of scrollback).
    for (let start = 0; start < lines.length; start += 4) {
      await Promise.all(
        lines.slice(start, start + 4).map(async ({ line, socket, until }) => {
          socket.send(JSON.stringify({ type: "take-keyboard" }));
          await until((message) => message.type === "keyboard" && message.canType);
          const nonce = randomBytes(4).toString("hex");
          const done = waitForText(line, `fill-done-${nonce}`);
          line.send(
            `seq -f 'line %g of the scrollback, long enough to look like real output' 1 1500; echo fill-done''-${nonce}\r`,
          );
          await done;
        }),
      );
    }
    await sample(`${sessions.length} consoles, full scrollback`);
    // The BFF archives a console's scrollback once its output has been quiet for a moment.
    const quietMs = defaultConsoleLimits.scrollbackArchiveAfterMs + 1_000;
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    await sample(`${sessions.length} consoles, full scrollback, quiet ${quietMs / 1000} s`);
    await Promise.all(lines.map(({ line }) => line.close()));
    return rows;
  } finally {
    await bff.stop();
  }
}

// Reporting

const fixed = (value: number, digits = 1) => value.toFixed(digits);
const pad = (text: string, width: number) => text.padStart(width);

interface RelayResults {
  cost: Awaited<ReturnType<typeof measureRelayCost>>;
  fanOut: Awaited<ReturnType<typeof measureFanOut>>;
  echo: { direct: number[]; relay: number[] };
  flood: Awaited<ReturnType<typeof measureFlood>>;
  fitFlood: Awaited<ReturnType<typeof measureFitFlood>>;
}

type MemoryRow = Awaited<ReturnType<typeof measureMemory>>[number];

const dot = () => process.stdout.write(".");

async function measureRelay(
  kubeConfig: KubeConfig,
  kubeconfigPath: string,
  dataDir: string,
  measured: string,
  quiet: string,
): Promise<RelayResults> {
  const staff = staffNames(viewerCount - 1);
  await writeUsersWithStaff(dataDir, staff);
  const bff = await startBff(kubeconfigPath, dataDir);
  const bare = await forkBff<BarePipeMessage>("bare-pipe.ts", { kubeconfigPath });
  try {
    const alice = await signInCookie(bff.url, "alice");
    console.log(
      `Relay cost: ${args.megabytes} MB of guest output a run, ${runs} rounds after a warm-up one, 2 producers`,
    );
    const cost = await measureRelayCost(
      { kubeConfig, bff, bare, cookie: alice, sessionId: measured, rounds: runs, onRound: dot },
      [text, yes],
    );
    console.log(`\nFan-out: ${viewerCount} viewers against 1, ${runs} rounds after a warm-up one`);
    const fanOut = await measureFanOut({
      bff,
      ownerCookie: alice,
      observerCookies: await Promise.all(staff.map((name) => signInCookie(bff.url, name))),
      sessionId: measured,
      command: text.command,
      rounds: runs,
      onRound: dot,
    });
    console.log(`\nEcho latency: ${echoCount} keystrokes each way`);
    const echo = await measureEcho(kubeConfig, bff, alice, measured);
    console.log("A `yes` flood in one VM, echo in another");
    const flood = await measureFlood(bff.url, alice, measured, quiet);
    console.log(`A fit-guest flood from one student for ${floodSeconds} s, typing in another VM`);
    const fitFlood = await measureFitFlood(bff, alice, measured, quiet);
    return { cost, fanOut, echo, flood, fitFlood };
  } finally {
    await Promise.all([bff.stop(), bare.stop()]);
  }
}

function reportRelay({ cost, fanOut, echo, flood, fitFlood }: RelayResults): void {
  reportRelayCost(cost, Number(args.megabytes));
  reportFanOut(fanOut, viewerCount, Number(args.megabytes));

  const [d50, d99, r50, r99] = [
    percentile(echo.direct, 50),
    percentile(echo.direct, 99),
    percentile(echo.relay, 50),
    percentile(echo.relay, 99),
  ];
  console.log(`\nKeystroke echo latency (ms, ${echo.direct.length} keystrokes each way)`);
  console.log(`  ${"".padEnd(10)}${pad("p50", 8)}${pad("p99", 8)}`);
  console.log(`  ${"direct".padEnd(10)}${pad(fixed(d50, 2), 8)}${pad(fixed(d99, 2), 8)}`);
  console.log(`  ${"via BFF".padEnd(10)}${pad(fixed(r50, 2), 8)}${pad(fixed(r99, 2), 8)}`);
  console.log(
    `  ${"added".padEnd(10)}${pad(fixed(r50 - d50, 2), 8)}${pad(fixed(r99 - d99, 2), 8)}   goal: p99 added < 2 ms ${r99 - d99 < 2 ? "ok" : "MISSED"}`,
  );
  console.log(`  ratio     ${pad(`${fixed(r50 / d50, 2)}x`, 8)}${pad(`${fixed(r99 / d99, 2)}x`, 8)}`);

  console.log("\nWhile another VM floods its console with `yes` (both via the BFF)");
  console.log(
    `  echo latency of the quiet VM: p50 ${fixed(percentile(flood.echo, 50), 2)} ms, p99 ${fixed(percentile(flood.echo, 99), 2)} ms`,
  );
  console.log(
    `  Ctrl-C in the flooding VM to its prompt: ${fixed(flood.ctrlCMs, 0)} ms (goal < 1000 ms ${flood.ctrlCMs < 1000 ? "ok" : "MISSED"}); ${fixed(flood.floodMb)} MB flooded meanwhile`,
  );

  const { quiet: calm, flood: stormy } = fitFlood;
  console.log(
    `\nThe BFF's event-loop delay (ms) while typing in one VM; its owner floods another with fit-guest frames`,
  );
  console.log(`  ${"".padEnd(22)}${pad("p50", 8)}${pad("p99", 8)}${pad("max", 8)}`);
  for (const [label, delay] of [
    ["no flood", calm],
    ["fit-guest flood", stormy],
  ] as const) {
    console.log(
      `  ${label.padEnd(22)}${pad(fixed(delay.p50Ms, 2), 8)}${pad(fixed(delay.p99Ms, 2), 8)}${pad(fixed(delay.maxMs, 1), 8)}`,
    );
  }
  console.log(
    `  ratio p99 ${fixed(stormy.p99Ms / calm.p99Ms, 2)}x; ${fitFlood.framesSent} frames sent, ${fitFlood.socketsClosed} flooding sockets closed by the BFF, ${fitFlood.refusedAttaches} reopenings refused; goal p99 < 20 ms ${stormy.p99Ms < 20 ? "ok" : "MISSED"}`,
  );
}

function reportMemory(memory: MemoryRow[]): void {
  console.log(`\nBFF memory (MB, after a full GC)`);
  console.log(`  ${"".padEnd(42)}${pad("RSS", 8)}${pad("heap", 8)}${pad("buffers", 9)}`);
  for (const row of memory) {
    console.log(
      `  ${row.label.padEnd(42)}${pad(fixed(row.rss), 8)}${pad(fixed(row.heap), 8)}${pad(fixed(row.external), 9)}`,
    );
  }
  const base = memory[0]!.rss;
  for (const row of memory.slice(1)) {
    const cost = row.rss - base;
    const perConsole = cost / consoleCount;
    console.log(
      `  ${row.label.padEnd(42)}+${fixed(cost)} MB, ${fixed(perConsole, 2)} MB a console   goal < 1 MB ${perConsole < 1 ? "ok" : "MISSED"}`,
    );
  }
}

async function main(): Promise<void> {
  console.log("Starting the emulator and the BFF (each a process of its own)...");
  const { stateDir, emulator, kubeConfig, cluster } = await startBenchCluster("console");
  try {
    // With the grading agent, whose terminal is measured beside the serial console.
    const [measured, quiet] = await launchRunningSessions(cluster, ["alice", "alice"], agentSecret);
    if (!measured || !quiet) throw new Error("no sessions");
    const relay = args["memory-only"]
      ? undefined
      : await measureRelay(kubeConfig, emulator.kubeconfigPath, path.join(stateDir, "bff"), measured, quiet);
    console.log(`Memory: ${consoleCount} consoles (starting ${consoleCount} VMs)`);
    const memory = await measureMemory(emulator.kubeconfigPath, path.join(stateDir, "bff-memory"), cluster, [
      measured,
      quiet,
    ]);
    if (relay) reportRelay(relay);
    reportMemory(memory);
  } finally {
    await emulator.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

await main();
