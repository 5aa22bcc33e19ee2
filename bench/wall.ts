// What the class wall costs the BFF, in two parts.
//
// Real: consoles that print all the time (each guest runs a loop printing a line every 0.1 s), shown
// on one wall. Prints the BFF's CPU and the wall's bytes per second with the wall open, against the
// same busy consoles with no wall (the BFF still parses their output: that is the console hub's cost,
// not the wall's), with a search running (plain text, then a regular expression), and after the wall
// closed (a hidden tab). The search's own cost comes from inside the BFF: its
// lab_console_wall_search_seconds histogram, one observation per pass over the screens that changed.
//
// In-process (support/wall-in-process.ts): 300 screen copies as the hub keeps them (screen.ts), fed
// realistic busy output, 10 lines each between passes, searched as one wall searches them
// (wall-matches.ts). Exact p50/p99 of a pass over all 300, and of a new search over all 300, and the
// heap the 300 copies take; once for each depth of searchable rows asked for (--searchable-rows
// 100,1000: side by side, in one run).
//
// Walls: one TA opens 40 walls on 5 screens full of long rows and changes a costly search on each
// every 100 ms (the second security review's attack). /api/healthz's p95 and a console's echo p95,
// each beside its value with no wall, side by side (goal: within 2x): the BFF opens three walls a
// person, and their searches share one person's budget.
//
//   npm run bench:wall [-- --consoles 300 --seconds 10 --part all|real|in-process|walls
//                          --searchable-rows 1000]
//
// The emulator and the BFF run as processes of their own (the BFF as bench:console starts it); CPU
// is read from /proc for the BFF's process alone.
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { ConsoleServerMessage } from "../src/common/console-protocol.ts";
import type { WallSearch } from "../src/common/wall-protocol.ts";
import { defaultConsoleLimits } from "../src/server/console/limits.ts";
import { ConsoleTestClient, signInCookie } from "../src/server/console/testing/console-client.ts";
import { openBrowserSocket } from "../src/server/testing/browser-socket.ts";
import { WallTestClient } from "../src/server/wall/testing/wall-client.ts";
import type { BffMessage } from "./console-bff.ts";
import { benchLab, launchRunningSessions, startBenchCluster } from "./support/bench-cluster.ts";
import { forkBff } from "./support/bff-process.ts";
import { percentile } from "./support/spread.ts";
import { inProcess } from "./support/wall-in-process.ts";

const { values: args } = parseArgs({
  options: {
    consoles: { type: "string", default: "300" },
    seconds: { type: "string", default: "10" },
    part: { type: "string", default: "all" },
    "searchable-rows": { type: "string", default: String(defaultConsoleLimits.searchableLines) },
  },
});
const consoleCount = Number(args.consoles);
const sampleSeconds = Number(args.seconds);
const metricsToken = "bench-wall-metrics-token";
/** Room and pods for 300 VMs: the scheduler is not what is measured. */
const bigCluster = `nodes:
${["node01", "node02", "node03", "node04"].map((name) => `  - { name: ${name}, cpu: "64", memory: 512Gi, pods: 250 }`).join("\n")}
`;
/** What staff look for: a string no busy loop prints (every row is searched, none matches), and a pattern. */
const searches: { label: string; search: WallSearch }[] = [
  { label: "plain text", search: { query: "permission denied", regex: false, matchCase: false } },
  {
    label: "regular expression",
    search: { query: "error: .*undeclared|command not found|tick 1\\d{3} ", regex: true, matchCase: false },
  },
];
// A builtin loop (no fork per line): `read -t` waits 0.1 s on the serial line nobody types into.
const busyLoop = "while :; do printf 'tick %s %s\\n' $RANDOM $SECONDS; read -t 0.1 _; done\r";

/** CPU seconds (user + system) the process used so far, from /proc/<pid>/stat. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A TA takes each console's keyboard, starts the loop and leaves: the guest goes on printing. */
async function startBusyLoop(
  bffUrl: string,
  cookie: string,
  sessionId: string,
  command = busyLoop,
): Promise<void> {
  const socket = openBrowserSocket(bffUrl, `/api/sessions/${sessionId}/console?mode=observe`, { cookie });
  await new Promise<void>((resolve, reject) => {
    socket.on("message", (data: Buffer, isBinary) => {
      if (isBinary) return;
      const message = ConsoleServerMessage.parse(JSON.parse(data.toString("utf8")));
      if (message.type === "status" && message.state === "connected") {
        socket.send(JSON.stringify({ type: "take-keyboard" }));
      }
      if (message.type === "keyboard" && message.canType) {
        socket.send(Buffer.from(command), { binary: true });
        resolve();
      }
      if (message.type === "ended") reject(new Error(message.reason));
    });
    socket.once("error", reject);
  });
  // Let the keystrokes leave before the socket closes.
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.close();
}

async function measure(
  pid: number,
  wall: WallTestClient | undefined,
): Promise<{ cpuPercent: number; kbPerSecond: number; framesPerSecond: number }> {
  const cpuBefore = await cpuSeconds(pid);
  const bytesBefore = wall?.bytes ?? 0;
  const framesBefore = wall?.frames ?? 0;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, sampleSeconds * 1000));
  const seconds = (performance.now() - started) / 1000;
  return {
    cpuPercent: (((await cpuSeconds(pid)) - cpuBefore) / seconds) * 100,
    kbPerSecond: ((wall?.bytes ?? 0) - bytesBefore) / 1024 / seconds,
    framesPerSecond: ((wall?.frames ?? 0) - framesBefore) / seconds,
  };
}

/** The wall search histogram's cumulative buckets (by upper bound, in s), its sum and count. */
interface SearchHistogram {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

async function searchHistogram(bffUrl: string): Promise<SearchHistogram> {
  const response = await fetch(`${bffUrl}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
  const text = await response.text();
  const histogram: SearchHistogram = { buckets: new Map(), sum: 0, count: 0 };
  for (const line of text.split("\n")) {
    const bucket = /^lab_console_wall_search_seconds_bucket\{le="([^"]+)"\} (\S+)$/.exec(line);
    if (bucket) histogram.buckets.set(bucket[1] === "+Inf" ? Infinity : Number(bucket[1]), Number(bucket[2]));
    const total = /^lab_console_wall_search_seconds_(sum|count)(?:\{\})? (\S+)$/.exec(line);
    if (total) histogram[total[1] as "sum" | "count"] = Number(total[2]);
  }
  return histogram;
}

/** Between two scrapes: passes, mean, and the bucket bound each percentile falls under (ms). */
function searchCost(before: SearchHistogram, after: SearchHistogram) {
  const count = after.count - before.count;
  const bounds = [...after.buckets.keys()].sort((a, b) => a - b);
  const under = (quantile: number) => {
    const bound = bounds.find(
      (le) => (after.buckets.get(le) ?? 0) - (before.buckets.get(le) ?? 0) >= quantile * count,
    );
    return bound === undefined ? NaN : bound * 1000;
  };
  return {
    passes: count,
    meanMs: count > 0 ? ((after.sum - before.sum) / count) * 1000 : NaN,
    p50Ms: under(0.5),
    p99Ms: under(0.99),
  };
}

async function real(): Promise<void> {
  console.log(`Starting the emulator, ${consoleCount} VMs and the BFF...`);
  const { stateDir, emulator, cluster } = await startBenchCluster("wall", { clusterYaml: bigCluster });
  try {
    const sessions = await launchRunningSessions(
      cluster,
      Array.from({ length: consoleCount }, (_, index) => `student-${index}`),
    );
    const bff = await forkBff<BffMessage>("console-bff.ts", {
      kubeconfigPath: emulator.kubeconfigPath,
      env: { DATA_DIR: path.join(stateDir, "bff"), METRICS_TOKEN: metricsToken },
    });
    try {
      const tara = await signInCookie(bff.url, "tara");
      for (let start = 0; start < sessions.length; start += 10) {
        await Promise.all(sessions.slice(start, start + 10).map((id) => startBusyLoop(bff.url, tara, id)));
      }
      console.log(`${consoleCount} consoles printing; measuring ${sampleSeconds} s each...`);
      // The consoles linger 60 s after their last viewer: they are still open and parsing here.
      const noWall = await measure(bff.pid, undefined);

      const wall = await WallTestClient.connect(bff.url, benchLab.id, { cookie: tara });
      await wall.until(() => wall.screens.size >= consoleCount, `${consoleCount} screens`, 300_000);
      const withWall = await measure(bff.pid, wall);
      const screensPerFrame = wall.frames > 0 ? wall.screens.size : 0;
      const searching: {
        label: string;
        sample: Awaited<ReturnType<typeof measure>>;
        cost: ReturnType<typeof searchCost>;
      }[] = [];
      for (const { label, search } of searches) {
        wall.search(search);
        await wall.until(() => wall.matchesFor(search) !== undefined, `an answer to the ${label}`, 60_000);
        const before = await searchHistogram(bff.url);
        const sample = await measure(bff.pid, wall);
        searching.push({ label, sample, cost: searchCost(before, await searchHistogram(bff.url)) });
      }
      wall.close();
      // A hidden tab closes its wall: the BFF stops sending at once.
      const hidden = await measure(bff.pid, wall);

      const row = (label: string, sample: Awaited<ReturnType<typeof measure>>) =>
        console.log(
          `  ${label.padEnd(42)}${sample.cpuPercent.toFixed(1).padStart(8)} %${sample.kbPerSecond.toFixed(1).padStart(10)} KiB/s${sample.framesPerSecond.toFixed(1).padStart(8)} frames/s`,
        );
      console.log(`\nThe BFF with ${consoleCount} busy consoles (10 lines/s each), over ${sampleSeconds} s`);
      console.log(`  ${"".padEnd(42)}${"BFF CPU".padStart(10)}${"wall".padStart(16)}`);
      row("no wall (consoles parsing only)", noWall);
      row("one wall open", withWall);
      for (const { label, sample } of searching) row(`one wall searching (${label})`, sample);
      row("wall closed (tab hidden)", hidden);
      console.log(
        `  the wall's cost: ${(withWall.cpuPercent - noWall.cpuPercent).toFixed(1)} % CPU of one core, ` +
          `${(withWall.kbPerSecond / consoleCount).toFixed(2)} KiB/s per console (${screensPerFrame} screens shown)`,
      );
      console.log(
        `\nThe search's cost inside the BFF, one pass over the screens that changed (goal: p99 under 50 ms)`,
      );
      for (const { label, cost } of searching) {
        console.log(
          `  ${label.padEnd(20)} ${String(cost.passes).padStart(4)} passes  mean ${cost.meanMs.toFixed(1).padStart(6)} ms` +
            `  p50 <= ${cost.p50Ms} ms  p99 <= ${cost.p99Ms} ms`,
        );
      }
    } finally {
      await bff.stop();
    }
  } finally {
    await emulator.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** p95 of sequential GET /api/healthz answers over `seconds`, in ms. */
async function healthzP95(bffUrl: string, seconds: number): Promise<number> {
  const samples: number[] = [];
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    const started = performance.now();
    await (await fetch(`${bffUrl}/api/healthz`)).arrayBuffer();
    samples.push(performance.now() - started);
  }
  return percentile(
    samples.sort((a, b) => a - b),
    0.95,
  );
}

/** p95 of a typed character's echo on a console, through the BFF, over `seconds`, in ms. */
async function echoP95(console: ConsoleTestClient, seconds: number): Promise<number> {
  const samples: number[] = [];
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    const before = console.received;
    const started = performance.now();
    console.type("x");
    await console.until(() => console.received > before, "the echo");
    samples.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  console.type("\x15"); // Ctrl-U: the typed x's go
  return percentile(
    samples.sort((a, b) => a - b),
    0.95,
  );
}

async function walls(): Promise<void> {
  const screens = 5;
  const wallCount = 40;
  console.log(`\nStarting the emulator, ${screens + 1} VMs and the BFF for ${wallCount} walls of one TA...`);
  const { stateDir, emulator, cluster } = await startBenchCluster("walls");
  try {
    const sessions = await launchRunningSessions(
      cluster,
      Array.from({ length: screens + 1 }, (_, index) => `student-${index}`),
    );
    const bff = await forkBff<BffMessage>("console-bff.ts", {
      kubeconfigPath: emulator.kubeconfigPath,
      env: { DATA_DIR: path.join(stateDir, "bff") },
    });
    try {
      const tara = await signInCookie(bff.url, "tara");
      const fill = `python3 -c 'print(("a" * 78 + "!\\n") * 1200)'\r`;
      for (const id of sessions.slice(0, screens)) await startBusyLoop(bff.url, tara, id, fill);
      const ivan = await signInCookie(bff.url, "ivan");
      const typist = await ConsoleTestClient.connect(bff.url, sessions[screens]!, {
        cookie: ivan,
        mode: "observe",
      });
      await typist.untilLive(60_000);
      typist.send({ type: "take-keyboard" });
      await typist.until(() => typist.lastMessage("keyboard")?.canType === true, "the keyboard");

      const phase = async () => {
        const [healthz, echo] = await Promise.all([
          healthzP95(bff.url, sampleSeconds),
          echoP95(typist, sampleSeconds),
        ]);
        return { healthz, echo };
      };
      const idle = await phase();
      const opened = await Promise.all(
        Array.from({ length: wallCount }, () =>
          WallTestClient.connect(bff.url, benchLab.id, { cookie: tara }),
        ),
      );
      await Promise.all(
        opened.map((wall) => wall.until(() => wall.frames > 0 || wall.closedWith !== undefined, "an answer")),
      );
      const live = opened.filter((wall) => wall.refused === undefined);
      const costly = "(a|.)*".repeat(31);
      let turn = 0;
      const typing = setInterval(() => {
        turn += 1;
        for (const wall of live)
          wall.search({ query: `${costly}${turn % 2 === 0 ? "Q" : "R"}`, regex: true, matchCase: false });
      }, 100);
      const attacked = await phase();
      clearInterval(typing);
      for (const wall of opened) wall.close();
      typist.close();

      const ratio = (during: number, before: number) => `${(during / before).toFixed(1)}x`;
      console.log(
        `\nOne TA opening ${wallCount} walls with a costly search changing every 100 ms, ${sampleSeconds} s each`,
      );
      console.log(`  walls open: ${live.length}, refused: ${opened.length - live.length} (too_many_walls)`);
      console.log(`  ${"".padEnd(28)}${"no wall".padStart(10)}${"attacked".padStart(10)}  (goal: within 2x)`);
      console.log(
        `  ${"/api/healthz p95".padEnd(28)}${idle.healthz.toFixed(1).padStart(8)} ms${attacked.healthz.toFixed(1).padStart(8)} ms  ${ratio(attacked.healthz, idle.healthz)}`,
      );
      console.log(
        `  ${"console echo p95".padEnd(28)}${idle.echo.toFixed(1).padStart(8)} ms${attacked.echo.toFixed(1).padStart(8)} ms  ${ratio(attacked.echo, idle.echo)}`,
      );
    } finally {
      await bff.stop();
    }
  } finally {
    await emulator.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

if (args.part === "all" || args.part === "real") await real();
if (args.part === "all" || args.part === "in-process") {
  for (const rows of args["searchable-rows"].split(",")) await inProcess(Number(rows), searches);
}
if (args.part === "all" || args.part === "walls") await walls();
