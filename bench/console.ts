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
// the SPA does once xterm.js has written them. Each measurement's code is in support/ (relay-cost.ts,
// fan-out.ts, fit-flood.ts, console-memory.ts) but for the echo and the flood's, which are short.
import { rm } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import type { KubeConfig } from "@kubernetes/client-node";
import { signInCookie } from "../src/server/console/testing/console-client.ts";
import type { BarePipeMessage } from "./bare-pipe.ts";
import type { BffMessage } from "./console-bff.ts";
import { launchRunningSessions, startBenchCluster } from "./support/bench-cluster.ts";
import { forkBff } from "./support/bff-process.ts";
import {
  atPrompt,
  echoLatencies,
  openDirect,
  openRelay,
  prompt,
  viewersDownTo,
  waitForText,
  type ConsoleBff,
} from "./support/console-lines.ts";
import { measureMemory, reportMemory } from "./support/console-memory.ts";
import { measureFanOut, reportFanOut, staffNames, writeUsersWithStaff } from "./support/fan-out.ts";
import { measureFitFlood, reportFitFlood, type FitFlood } from "./support/fit-flood.ts";
import { measureRelayCost, reportRelayCost, type Producer } from "./support/relay-cost.ts";
import { mb } from "./support/spread.ts";
import { fixed, pad } from "./support/columns.ts";

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

// Reporting

interface RelayResults {
  cost: Awaited<ReturnType<typeof measureRelayCost>>;
  fanOut: Awaited<ReturnType<typeof measureFanOut>>;
  echo: { direct: number[]; relay: number[] };
  flood: Awaited<ReturnType<typeof measureFlood>>;
  fitFlood: FitFlood;
}

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
    const fitFlood = await measureFitFlood(bff, alice, measured, quiet, floodSeconds);
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

  reportFitFlood(fitFlood);
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
    const memory = await measureMemory(cluster, [measured, quiet], consoleCount, () =>
      startBff(emulator.kubeconfigPath, path.join(stateDir, "bff-memory")),
    );
    if (relay) reportRelay(relay);
    reportMemory(memory, consoleCount);
  } finally {
    await emulator.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

await main();
