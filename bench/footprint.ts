// `npm run bench:footprint`: what a release costs to run, side by side in one run, and against the
// figures of the previous run (bench/results/footprint.json, rewritten unless --no-save):
//  - start to ready on a fresh copy of the checkout after `npm ci` (npm start builds dist/ first),
//    and again with dist/ present;
//  - the BFF's resident memory at rest, compiled (node dist/server/main.js) and from source through
//    tsx as `npm start` ran it before there was a build (its loader process counted apart); the
//    embedded emulator is a process of its own and not counted;
//  - the SPA's JavaScript a signed-in student and an instructor load, gzip.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { measureSpaWeight } from "./support/spa-weight.ts";

const root = path.resolve(import.meta.dirname, "..");
const resultsFile = path.join(root, "bench/results/footprint.json");

interface Figures {
  freshStartMs: number;
  restartMs: number;
  compiledRssMb: number;
  sourceRssMb: number;
  sourceLoaderRssMb: number;
  studentSpaGzipKb: number;
  instructorSpaGzipKb: number;
}

const goals: Partial<Record<keyof Figures, number>> = {
  freshStartMs: 10_000,
  restartMs: 2_000,
  compiledRssMb: 150,
  studentSpaGzipKb: 150,
};

const labels: Record<keyof Figures, string> = {
  freshStartMs: "start to ready, fresh copy (builds dist/)",
  restartMs: "start to ready, dist/ present",
  compiledRssMb: "BFF RSS at rest, compiled (MB)",
  sourceRssMb: "BFF RSS at rest, source via tsx (MB)",
  sourceLoaderRssMb: "  + tsx's loader process (MB)",
  studentSpaGzipKb: "SPA JS for a student, gzip (KB)",
  instructorSpaGzipKb: "SPA JS for an instructor, gzip (KB)",
};

/** A copy of the checkout as a fresh clone has it: tracked and new files, no dist/, no .lab/. */
async function freshCopy(): Promise<string> {
  const copy = await mkdtemp(path.join(tmpdir(), "bench-footprint-"));
  const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\0")
    .filter(Boolean);
  for (const file of files) {
    await mkdir(path.dirname(path.join(copy, file)), { recursive: true });
    await copyFile(path.join(root, file), path.join(copy, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error; // deleted in the working tree, not yet in git
    });
  }
  // What `npm ci` would install, without compiling better-sqlite3 again.
  await symlink(path.join(root, "node_modules"), path.join(copy, "node_modules"));
  return copy;
}

interface Started {
  child: ChildProcess;
  readyMs: number;
  url: string;
}

let nextPort = 18700;

async function startUntilReady(
  command: string,
  args: string[],
  cwd: string,
  dataDir: string,
): Promise<Started> {
  const port = nextPort++;
  const started = performance.now();
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
    detached: true,
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} ${args.join(" ")} exited ${child.exitCode}`);
    const ready = await fetch(`${url}/api/readyz`).then(
      (answer) => answer.ok,
      () => false,
    );
    if (ready) return { child, readyMs: performance.now() - started, url };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stop({ child }: Started): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-(child.pid ?? 0), "SIGTERM");
  await exited;
}

/** Processes below `pid` whose command line matches, with their resident memory in MB. */
async function descendants(pid: number): Promise<{ pid: number; command: string; rssMb: number }[]> {
  const found: { pid: number; command: string; rssMb: number }[] = [];
  const parents = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    parents.set(Number(entry), parent);
  }
  const below = (candidate: number): boolean => {
    for (let at = parents.get(candidate); at !== undefined && at > 1; at = parents.get(at)) {
      if (at === pid) return true;
    }
    return false;
  };
  for (const candidate of [pid, ...[...parents.keys()].filter(below)]) {
    const command = (await readFile(`/proc/${candidate}/cmdline`, "utf8").catch(() => "")).replaceAll(
      "\0",
      " ",
    );
    const status = await readFile(`/proc/${candidate}/status`, "utf8").catch(() => "");
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    found.push({ pid: candidate, command, rssMb: rssKb / 1024 });
  }
  return found;
}

/** Median resident memory of each matching process over 5 s, from 5 s after ready, sampled together. */
async function rssAtRest(started: Started, matches: RegExp[]): Promise<number[]> {
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const samples: number[][] = matches.map(() => []);
  for (let index = 0; index < 10; index++) {
    const processes = await descendants(started.child.pid ?? 0);
    matches.forEach((match, at) => {
      const found = processes.find(({ command }) => match.test(command));
      if (!found) throw new Error(`no process matches ${match}`);
      samples[at]?.push(found.rssMb);
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return samples.map((series) => series.sort((a, b) => a - b)[series.length >> 1] ?? 0);
}

async function measure(): Promise<Figures> {
  const copy = await freshCopy();
  // A restart keeps its data folder (the emulator's CA, the secrets), as a restart does.
  const dataDir = path.join(copy, ".lab");
  try {
    const fresh = await startUntilReady("npm", ["start"], copy, dataDir);
    await stop(fresh);
    const restarted = await startUntilReady("npm", ["start"], copy, dataDir);
    const [compiledRssMb = 0] = await rssAtRest(restarted, [/^node dist\/server\/main\.js/]);
    const student = await measureSpaWeight({ baseUrl: restarted.url, username: "alice", password: "demo" });
    const instructor = await measureSpaWeight({ baseUrl: restarted.url, username: "ivan", password: "demo" });
    await stop(restarted);

    const source = await startUntilReady(
      path.join(copy, "node_modules/.bin/tsx"),
      ["src/server/main.ts"],
      copy,
      dataDir,
    );
    const [sourceRssMb = 0, sourceLoaderRssMb = 0] = await rssAtRest(source, [
      /--import .*tsx.* src\/server\/main\.ts/,
      /node_modules\/\.bin\/tsx src\/server\/main\.ts/,
    ]);
    await stop(source);
    return {
      freshStartMs: fresh.readyMs,
      restartMs: restarted.readyMs,
      compiledRssMb,
      sourceRssMb,
      sourceLoaderRssMb,
      studentSpaGzipKb: student.gzipBytes / 1000,
      instructorSpaGzipKb: instructor.gzipBytes / 1000,
    };
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

function format(key: keyof Figures, value: number | undefined): string {
  if (value === undefined) return "-";
  return key.endsWith("Ms") ? `${(value / 1000).toFixed(2)} s` : value.toFixed(1);
}

const { values } = parseArgs({ options: { "no-save": { type: "boolean", default: false } } });
const previous = (await readFile(resultsFile, "utf8").then(JSON.parse, () => undefined)) as
  { measuredAt: string; figures: Figures } | undefined;
const figures = await measure();

console.log(`\nFootprint${previous ? ` (previous run: ${previous.measuredAt})` : ""}`);
console.log(`  ${"".padEnd(44)}${"now".padStart(10)}${"previous".padStart(10)}   goal`);
for (const key of Object.keys(labels) as (keyof Figures)[]) {
  const goal = goals[key];
  const verdict = goal === undefined ? "" : `${format(key, goal)} ${figures[key] < goal ? "ok" : "MISSED"}`;
  console.log(
    `  ${labels[key].padEnd(44)}${format(key, figures[key]).padStart(10)}${format(key, previous?.figures[key]).padStart(10)}   ${verdict}`,
  );
}
console.log(
  `  compiled against source: ${(figures.compiledRssMb / figures.sourceRssMb).toFixed(2)} of the memory, ` +
    `${(figures.compiledRssMb / (figures.sourceRssMb + figures.sourceLoaderRssMb)).toFixed(2)} with tsx's loader`,
);
if (!values["no-save"]) {
  await mkdir(path.dirname(resultsFile), { recursive: true });
  await writeFile(
    resultsFile,
    `${JSON.stringify({ measuredAt: new Date().toISOString(), figures }, null, 2)}\n`,
  );
}
