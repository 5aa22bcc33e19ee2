// What the console relay costs, side by side in one run:
//  - throughput: guest output through emulator -> BFF -> websocket client, against the same client
//    connected straight to the emulator's console subresource (as KubeVirt serves it), with the
//    BFF's CPU time per MB relayed (on a small machine the cores, not the BFF, set the ratio);
//  - keystroke echo latency p50/p99, both ways;
//  - while another VM floods its console with `yes`: echo latency, and how long Ctrl-C takes to
//    bring the prompt back;
//  - the BFF's event-loop delay while a student floods their socket with "fit the guest" messages
//    (a screen resize each, once), against the same seconds without the flood;
//  - the BFF's memory with 100 open consoles (idle, then each with a full scrollback: right after
//    printing it, and once quiet long enough for the scrollback to be archived).
//
//   npm run bench:console [-- --megabytes 50 --runs 3 --echoes 400 --consoles 100 --flood-seconds 5]
//   npm run bench:console -- --memory-only [--consoles 100]   (only the memory measurement)
//
// The emulator and the BFF run as processes of their own (as with `npm start`); the clients run
// here and only count bytes, acknowledging them as the SPA does once xterm.js has written them.
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { consoleAckBytes, ConsoleServerMessage } from "../src/common/console-protocol.ts";
import { defaultConsoleLimits } from "../src/server/console/limits.ts";
import { signInCookie } from "../src/server/console/testing/console-client.ts";
import type { ClusterClient } from "../src/server/kube/client.ts";
import { openVmiWebSocket } from "../src/server/kube/vmi-websocket.ts";
import { openBrowserSocket } from "../src/server/testing/browser-socket.ts";
import type { KubeConfig } from "@kubernetes/client-node";
import type { BffMessage } from "./console-bff.ts";
import { benchNamespace, launchRunningSessions, startBenchCluster } from "./support/bench-cluster.ts";
import { forkBff, type BffProcess } from "./support/bff-process.ts";

const { values: args } = parseArgs({
  options: {
    megabytes: { type: "string", default: "50" },
    runs: { type: "string", default: "3" },
    echoes: { type: "string", default: "400" },
    consoles: { type: "string", default: "100" },
    "flood-seconds": { type: "string", default: "5" },
    "memory-only": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (args.help) {
  console.log(
    "npm run bench:console [-- --megabytes 50 --runs 3 --echoes 400 --consoles 100 --flood-seconds 5]\n" +
      "npm run bench:console -- --memory-only [--consoles 100]",
  );
  process.exit(0);
}
const outputBytes = Number(args.megabytes) * 1024 * 1024;
const runs = Number(args.runs);
const echoCount = Number(args.echoes);
const consoleCount = Number(args.consoles);
const floodSeconds = Number(args["flood-seconds"]);
const mb = (bytes: number) => bytes / (1024 * 1024);

/** A console as the bench uses it, whichever way it is connected. */
interface Line {
  send(text: string): void;
  onData(listener: (chunk: Buffer) => void): () => void;
  close(): void;
}

function lineOf(socket: WebSocket, afterData: (bytes: number) => void = () => {}): Line {
  const listeners = new Set<(chunk: Buffer) => void>();
  socket.on("message", (data: Buffer, isBinary) => {
    if (!isBinary) return;
    for (const listener of listeners) listener(data);
    afterData(data.length);
  });
  return {
    send: (text) => socket.send(Buffer.from(text, "utf8"), { binary: true }),
    onData(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => socket.close(),
  };
}

/** Straight to the emulator's console subresource with the admin's credentials, as virtctl would. */
async function openDirect(kubeConfig: KubeConfig, vmiName: string): Promise<Line> {
  const socket = await openVmiWebSocket({
    kubeConfig,
    namespace: benchNamespace,
    vmiName,
    subresource: "console",
    options: { perMessageDeflate: false },
    signal: AbortSignal.timeout(10_000),
  });
  return lineOf(socket);
}

interface RelayLine {
  line: Line;
  socket: WebSocket;
  /** Resolves once a control message matching `accept` arrived (from the start of the socket). */
  until(accept: (message: ConsoleServerMessage) => boolean): Promise<void>;
  /** Screens replayed since the first: the BFF skipped output this client was too slow for. */
  catchUps(): number;
}

/** Through the BFF, as the SPA connects: cookie, Origin, and acks (every 32 KiB or when idle). */
async function openRelay(
  bffUrl: string,
  cookie: string,
  sessionId: string,
  { mode, terminal }: { mode?: "observe"; terminal?: number } = {},
): Promise<RelayLine> {
  const which = terminal === undefined ? "console" : `terminals/${terminal}`;
  const socket = openBrowserSocket(
    bffUrl,
    `/api/sessions/${sessionId}/${which}${mode ? "?mode=observe" : ""}`,
    {
      cookie,
    },
  );
  let unacked = 0;
  let flushScheduled = false;
  const ack = () => {
    flushScheduled = false;
    if (unacked === 0 || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify({ type: "ack", bytes: unacked }));
    unacked = 0;
  };
  const line = lineOf(socket, (bytes) => {
    unacked += bytes;
    if (unacked >= consoleAckBytes) ack();
    else if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(ack);
    }
  });
  const messages: ConsoleServerMessage[] = [];
  const waiters = new Set<() => void>();
  socket.on("message", (data: Buffer, isBinary) => {
    if (isBinary) return;
    messages.push(ConsoleServerMessage.parse(JSON.parse(data.toString("utf8"))));
    for (const check of [...waiters]) check();
  });
  const until = (accept: (message: ConsoleServerMessage) => boolean) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        const ended = messages.find((message) => message.type === "ended");
        if (ended) reject(new Error(`console ended: ${JSON.stringify(ended)}`));
        else if (!messages.some(accept)) return;
        else resolve();
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
    socket.once("unexpected-response", (_request, response) =>
      reject(new Error(`the BFF refused the console: HTTP ${response.statusCode}`)),
    );
  });
  // A console that never connects fails the bench rather than hanging it.
  const within = (work: Promise<void>, what: string) =>
    Promise.race([
      work,
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`${which} of ${sessionId}: no ${what} within 60 s`)),
          60_000,
        ).unref(),
      ),
    ]);
  await within(
    until((message) => message.type === "replay-end"),
    "replay",
  );
  await within(
    until((message) => message.type === "status" && message.state === "connected"),
    "connection",
  );
  const catchUps = () => messages.filter((message) => message.type === "replay-begin").length - 1;
  return { line, socket, until, catchUps };
}

/**
 * Resolves once the stream shows `pattern` in what arrives from now on. Only the ends of each chunk
 * are searched (decoding all of it would slow the client down): every pattern waited for here is the
 * last thing printed.
 */
function waitForText(line: Line, pattern: RegExp | string, timeoutMs = 120_000): Promise<number> {
  return new Promise((resolve, reject) => {
    let tail = "";
    let received = 0;
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`timed out waiting for ${String(pattern)}; last output: ${JSON.stringify(tail)}`));
    }, timeoutMs);
    const stop = line.onData((chunk) => {
      received += chunk.length;
      const seen = tail + chunk.subarray(0, 256).toString("latin1");
      const end = chunk.length > 256 ? chunk.subarray(-256).toString("latin1") : "";
      tail = (end || seen).slice(-256);
      const matches = (text: string) =>
        typeof pattern === "string" ? text.includes(pattern) : pattern.test(text);
      if (matches(seen) || (end !== "" && matches(end))) {
        clearTimeout(timer);
        stop();
        resolve(received);
      }
    });
  });
}

const prompt = /\$ $/;

/** Gets a fresh prompt, so nothing earlier is still arriving when a measurement starts. */
async function atPrompt(line: Line): Promise<void> {
  const shown = waitForText(line, prompt, 30_000);
  line.send("\r");
  await shown;
}

async function throughput(line: Line, producer: string): Promise<{ bytes: number; seconds: number }> {
  await atPrompt(line);
  const nonce = randomBytes(4).toString("hex");
  const done = waitForText(line, `tp-done-${nonce}`);
  const started = performance.now();
  // The echoed command reads tp-done''-..., so only the shell's output matches.
  line.send(`${producer}; echo tp-done''-${nonce}\r`);
  const bytes = await done;
  return { bytes, seconds: (performance.now() - started) / 1000 };
}

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

// The BFF process

type ConsoleBff = BffProcess<BffMessage>;

const agentSecret = "bench-console-agent-secret-bench-console-agent";

function startBff(kubeconfigPath: string, dataDir: string): Promise<ConsoleBff> {
  return forkBff<BffMessage>("console-bff.ts", {
    kubeconfigPath,
    env: { DATA_DIR: dataDir, AGENT_TOKEN_SECRET: agentSecret },
    execArgv: ["--expose-gc"],
  });
}

/** Resolves once the BFF has let go of every viewer (a closed socket is gone on its side too). */
async function noViewers(bff: ConsoleBff): Promise<void> {
  while ((await bff.ask("stats", "stats")).consoles.viewers !== 0);
}

// The measurements

interface ThroughputRow {
  label: string;
  /** Seconds from Enter to the end marker (median), and what arrived on the wire. */
  direct: { seconds: number; wireMb: number };
  relay: { seconds: number; wireMb: number; catchUps: number; bffCpuMsPerMb: number };
  /** The same output from a shell on one of the lab's terminals (a PTY through the agent), via the BFF. */
  terminal: { seconds: number; bffCpuMsPerMb: number };
}

async function measureThroughput(
  kubeConfig: KubeConfig,
  bff: ConsoleBff,
  cookie: string,
  sessionId: string,
): Promise<ThroughputRow[]> {
  const producers = [
    { label: "text, 78-char lines", command: `base64 -w 78 /dev/urandom | head -c ${outputBytes}` },
    { label: "`yes`, 2-byte lines", command: `yes | head -c ${outputBytes}` },
  ];
  const rows: ThroughputRow[] = [];
  for (const { label, command } of producers) {
    const direct: { seconds: number; bytes: number }[] = [];
    const relay: { seconds: number; bytes: number; catchUps: number; bffCpuMsPerMb: number }[] = [];
    const terminal: { seconds: number; bffCpuMsPerMb: number }[] = [];
    for (let run = 0; run < runs; run += 1) {
      // One at a time: a second console connection would kick the first, as KubeVirt's does.
      const straight = await openDirect(kubeConfig, sessionId);
      direct.push(await throughput(straight, command));
      straight.close();

      const relayed = await openRelay(bff.url, cookie, sessionId);
      const cpuBefore = (await bff.ask("cpu", "cpu")).ms;
      const relayedRun = await throughput(relayed.line, command);
      const bffCpuMs = (await bff.ask("cpu", "cpu")).ms - cpuBefore;
      relay.push({
        ...relayedRun,
        catchUps: relayed.catchUps(),
        bffCpuMsPerMb: bffCpuMs / mb(relayedRun.bytes),
      });
      relayed.line.close();
      await noViewers(bff);

      const shell = await openRelay(bff.url, cookie, sessionId, { terminal: 1 });
      const shellCpuBefore = (await bff.ask("cpu", "cpu")).ms;
      const shellRun = await throughput(shell.line, command);
      const shellCpuMs = (await bff.ask("cpu", "cpu")).ms - shellCpuBefore;
      terminal.push({ seconds: shellRun.seconds, bffCpuMsPerMb: shellCpuMs / mb(shellRun.bytes) });
      shell.line.close();
      await noViewers(bff);
      process.stdout.write(".");
    }
    const middle = <T extends { seconds: number }>(results: T[]) =>
      [...results].sort((a, b) => a.seconds - b.seconds)[Math.floor(results.length / 2)]!;
    const d = middle(direct);
    const r = middle(relay);
    rows.push({
      label,
      direct: { seconds: d.seconds, wireMb: mb(d.bytes) },
      relay: {
        seconds: r.seconds,
        wireMb: mb(r.bytes),
        catchUps: r.catchUps,
        bffCpuMsPerMb: r.bffCpuMsPerMb,
      },
      terminal: middle(terminal),
    });
  }
  process.stdout.write("\n");
  return rows;
}

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
    straight.close();
    const { line } = await openRelay(bff.url, cookie, sessionId);
    relay.push(...(await echoLatencies(line, Math.ceil(echoCount / rounds))));
    line.close();
    await noViewers(bff);
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
  flood.close();
  other.close();
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
  filler.close();
  await noViewers(bff);

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
  other.close();
  await noViewers(bff);
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
    for (const { line } of lines) line.close();
    return rows;
  } finally {
    await bff.stop();
  }
}

// Reporting

const fixed = (value: number, digits = 1) => value.toFixed(digits);
const pad = (text: string, width: number) => text.padStart(width);

interface RelayResults {
  tp: ThroughputRow[];
  echo: { direct: number[]; relay: number[] };
  flood: Awaited<ReturnType<typeof measureFlood>>;
  fitFlood: Awaited<ReturnType<typeof measureFitFlood>>;
}

type MemoryRow = Awaited<ReturnType<typeof measureMemory>>[number];

async function measureRelay(
  kubeConfig: KubeConfig,
  kubeconfigPath: string,
  dataDir: string,
  measured: string,
  quiet: string,
): Promise<RelayResults> {
  const bff = await startBff(kubeconfigPath, dataDir);
  try {
    const alice = await signInCookie(bff.url, "alice");
    console.log(`Throughput: ${args.megabytes} MB of guest output, ${runs} runs each way`);
    const tp = await measureThroughput(kubeConfig, bff, alice, measured);
    console.log(`Echo latency: ${echoCount} keystrokes each way`);
    const echo = await measureEcho(kubeConfig, bff, alice, measured);
    console.log("A `yes` flood in one VM, echo in another");
    const flood = await measureFlood(bff.url, alice, measured, quiet);
    console.log(`A fit-guest flood from one student for ${floodSeconds} s, typing in another VM`);
    const fitFlood = await measureFitFlood(bff, alice, measured, quiet);
    return { tp, echo, flood, fitFlood };
  } finally {
    await bff.stop();
  }
}

function reportRelay({ tp, echo, flood, fitFlood }: RelayResults): void {
  console.log(
    `\nThroughput: ${args.megabytes} MB printed by the guest, MB/s from Enter to the last byte (median of ${runs})`,
  );
  console.log(`  ${"output".padEnd(22)}${pad("direct", 10)}${pad("via BFF", 10)}${pad("ratio", 8)}   goal`);
  for (const row of tp) {
    const ratio = row.direct.seconds / row.relay.seconds;
    console.log(
      `  ${row.label.padEnd(22)}${pad(fixed(mb(outputBytes) / row.direct.seconds), 10)}${pad(fixed(mb(outputBytes) / row.relay.seconds), 10)}${pad(`${fixed(ratio * 100, 0)}%`, 8)}   >= 90% ${ratio >= 0.9 ? "ok" : "MISSED"}`,
    );
    console.log(
      `  ${"".padEnd(22)}${pad(`${fixed(row.direct.wireMb)} MB`, 10)}${pad(`${fixed(row.relay.wireMb)} MB`, 10)}   on the wire; the relay client caught up by replay ${row.relay.catchUps} times`,
    );
    console.log(
      `  ${"".padEnd(32)}${pad(fixed(row.relay.bffCpuMsPerMb), 10)}   ms of the BFF's CPU per MB relayed`,
    );
    console.log(
      `  ${"  a lab terminal".padEnd(32)}${pad(fixed(mb(outputBytes) / row.terminal.seconds), 10)}${pad(`${fixed((row.direct.seconds / row.terminal.seconds) * 100, 0)}%`, 8)}   via the BFF from a PTY through the agent; ${fixed(row.terminal.bffCpuMsPerMb)} ms of the BFF's CPU per MB`,
    );
  }

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
