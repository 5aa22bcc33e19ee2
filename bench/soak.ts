// The whole product at class scale, on loopback: students polling their sessions, consoles with
// steady output and typing, and a grading run over the running sessions, all at once, against the
// BFF and the emulator (each a process of its own, with real guests).
//
//   npm run soak                 300 students, 50 consoles, a grading run over those 50; 180 s
//   npm run soak -- --short      30 students, 5 consoles, 5 graded; 20 s (part of `npm test`)
//   npm run soak -- --seconds 60 --students 100 --consoles 20 --json soak.json
//
// Reports requests per second at the Kubernetes API, BFF latency per route (inside the BFF and as
// the students saw it), console bytes delivered and lost, keystroke echo latency, the BFF's RSS and
// event-loop delay. Exits 1 when a console lost, reordered or garbled output, a request failed, or
// the grading run did not grade every session.
import { rm, writeFile, mkdir } from "node:fs/promises";
import { availableParallelism } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import { hashPassword } from "../src/server/auth/passwords.ts";
import type { ClusterClient } from "../src/server/kube/client.ts";
import { defaultVmSizes, loadLabs } from "../src/server/labs/load-labs.ts";
import type { SoakBffMessage } from "./soak-bff.ts";
import { createHaltedSession, startBenchCluster } from "./support/bench-cluster.ts";
import { api, signIn, type Person } from "./support/browser-api.ts";
import { kubeRequestsByVerb } from "./support/kube-requests.ts";
import { forkBff, type BffProcess } from "./support/bff-process.ts";
import { printFigures, summarize, verdict, type Graded } from "./support/soak-figures.ts";
import { SoakConsole } from "./soak-console.ts";
import type { StudentsInput, StudentsResult } from "./soak-students.ts";

const { values: args } = parseArgs({
  options: {
    short: { type: "boolean", default: false },
    seconds: { type: "string" },
    students: { type: "string" },
    consoles: { type: "string" },
    "poll-ms": { type: "string", default: "2000" },
    "tick-ms": { type: "string", default: "100" },
    "type-ms": { type: "string", default: "400" },
    json: { type: "string" },
  },
});
const seconds = Number(args.seconds ?? (args.short ? 20 : 180));
const studentCount = Number(args.students ?? (args.short ? 30 : 300));
const consoleCount = Number(args.consoles ?? (args.short ? 5 : 50));
const pollMs = Number(args["poll-ms"]);
const tickMs = Number(args["tick-ms"]);
const typeMs = Number(args["type-ms"]);
const metricsToken = "soak-metrics-token-soak-metrics-token";
const labId = "soak-lab";
const labYaml = `id: ${labId}
title: Soak lab
vm:
  size: small
  image: quay.io/containerdisks/fedora:41
checks:
  - id: home
    title: The home directory exists
    run: test -d ~
    selfCheck: true
  - id: hello
    title: ~/hello.txt exists
    points: 2
    run: sleep 0.2; test -f ~/hello.txt
`;
const studentName = (index: number) => `student-${String(index).padStart(3, "0")}`;

async function main(): Promise<number> {
  const { stateDir, emulator, cluster } = await startBenchCluster("soak");
  const log = (message: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${message}`);
  log(
    `Soak: ${studentCount} students, ${consoleCount} consoles, a grading run over ${consoleCount} sessions, ${seconds} s (${availableParallelism()} CPUs)`,
  );
  let bff: BffProcess<SoakBffMessage> | undefined;
  const consoles: SoakConsole[] = [];
  try {
    await mkdir(path.join(stateDir, "labs"));
    await writeFile(path.join(stateDir, "labs", `${labId}.yaml`), labYaml);
    const passwordHash = await hashPassword("soak");
    const users = [
      ...Array.from({ length: studentCount }, (_, index) => ({
        username: studentName(index),
        role: "student",
      })),
      { username: "tara", role: "ta" },
      { username: "ivan", role: "instructor" },
    ].map((user) => ({ ...user, passwordHash }));
    await writeFile(path.join(stateDir, "users.json"), JSON.stringify({ users }));
    const consoleOwners = Array.from({ length: consoleCount }, (_, index) => studentName(index));
    const sessionOf = await seedHaltedSessions(cluster, stateDir, consoleCount, studentCount);
    bff = await startBff(emulator.consoleKubeconfigPath, stateDir);
    log(`BFF at ${bff.url}; ${sessionOf.size} halted sessions seeded; signing everyone in...`);
    const people = await inBatches(
      users.map((user) => user.username),
      8,
      (username) => signIn(bff!.url, username, "soak"),
    );
    const byName = new Map(people.map((person) => [person.username, person]));
    const ivan = byName.get("ivan")!;

    log(`Launching ${consoleCount} sessions through the BFF...`);
    await inBatches(consoleOwners, 8, async (owner) => {
      const launched = await api(bff!.url, byName.get(owner)!, "POST", "/api/sessions", { labId });
      if (launched.status !== 201)
        throw new Error(`launch for ${owner}: ${launched.status} ${launched.text}`);
      sessionOf.set(owner, (JSON.parse(launched.text) as { id: string }).id);
    });
    await until(
      async () => {
        const answer = await api(
          bff!.url,
          ivan,
          "GET",
          `/api/sessions?lab=${labId}&status=running&pageSize=1000`,
        );
        return (JSON.parse(answer.text) as { total: number }).total >= consoleCount;
      },
      120_000,
      "every launched session running",
    );

    log(`Opening ${consoleCount} consoles and starting their output...`);
    consoles.push(
      ...(await inBatches(consoleOwners, 5, async (owner) => {
        const opened = await SoakConsole.open(bff!.url, byName.get(owner)!.cookie, sessionOf.get(owner)!);
        await opened.startOutput(tickMs);
        return opened;
      })),
    );

    const students = Array.from({ length: studentCount }, (_, index) => {
      const username = studentName(index);
      return {
        cookie: byName.get(username)!.cookie,
        paths: ["/api/sessions", `/api/sessions/${sessionOf.get(username)}`],
      };
    });

    log(`Measuring for ${seconds} s...`);
    const kubeBefore = await kubeRequestsByVerb(bff.url, metricsToken);
    const startedAt = performance.now();
    const endAt = startedAt + seconds * 1000;
    bff.send("measure");
    const studentsDone = runStudents({ baseUrl: bff.url, students, seconds, intervalMs: pollMs });
    const typing = Promise.all(consoles.map((each) => each.typeUntil(endAt, typeMs)));
    const grading = (async () => {
      await new Promise((resolve) => setTimeout(resolve, seconds * 200));
      return gradeEverything(bff!.url, ivan);
    })();
    const [studentsResult, , graded] = await Promise.all([studentsDone, typing, grading]);
    const elapsed = (performance.now() - startedAt) / 1000;
    const report = await bff.ask("report", "report");
    const kubeAfter = await kubeRequestsByVerb(bff.url, metricsToken);
    // Output that was on its way when the window closed is still counted, not taken for lost.
    for (const each of consoles) each.close();

    const figures = summarize({
      elapsed,
      studentCount,
      consoleCount,
      studentsResult,
      report,
      consoles: consoles.map((each) => each.figures),
      kube: { before: kubeBefore, after: kubeAfter },
      graded,
    });
    printFigures(figures, { pollMs, tickMs, typeMs });
    if (args.json) await writeFile(args.json, JSON.stringify(figures, null, 2));
    const problems = verdict(figures);
    for (const problem of problems) console.log(`FAILED: ${problem}`);
    if (problems.length === 0) console.log("\nsoak passed");
    return problems.length === 0 ? 0 : 1;
  } finally {
    for (const each of consoles) each.close();
    await bff?.stop();
    await emulator.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

// The cluster

/** Halted session VMs for the students without a console: a session to poll, nothing to boot. */
async function seedHaltedSessions(
  cluster: ClusterClient,
  stateDir: string,
  from: number,
  to: number,
): Promise<Map<string, string>> {
  const [lab] = loadLabs(path.join(stateDir, "labs"), defaultVmSizes).labs;
  if (!lab) throw new Error("the soak's lab did not load");
  const sessionOf = new Map<string, string>();
  await inBatches(
    Array.from({ length: to - from }, (_, index) => studentName(from + index)),
    16,
    async (owner) => sessionOf.set(owner, await createHaltedSession(cluster, lab, owner)),
  );
  return sessionOf;
}

// The BFF process

async function startBff(kubeconfigPath: string, stateDir: string): Promise<BffProcess<SoakBffMessage>> {
  const bff = await forkBff<SoakBffMessage>("soak-bff.ts", {
    kubeconfigPath,
    env: {
      DATA_DIR: path.join(stateDir, "data"),
      LABS_DIR: path.join(stateDir, "labs"),
      LAB_USERS_FILE: path.join(stateDir, "users.json"),
      METRICS_TOKEN: metricsToken,
      // Every student connects from 127.0.0.1: the soak measures the BFF, not the cap per address.
      LAB_MAX_CONNECTIONS_PER_ADDRESS: "100000",
    },
  });
  await until(async () => (await fetch(`${bff.url}/api/readyz`)).status === 200, 60_000, "the BFF ready");
  return bff;
}

// HTTP as a browser

/** Starts a run over every running session and follows it as the grading page does (every second). */
async function gradeEverything(baseUrl: string, instructor: Person): Promise<Graded> {
  const started = performance.now();
  const answer = await api(baseUrl, instructor, "POST", `/api/labs/${labId}/grading-runs`, {});
  if (answer.status !== 201) throw new Error(`starting the grading run: ${answer.status} ${answer.text}`);
  const runId = (JSON.parse(answer.text) as { id: string }).id;
  for (;;) {
    const run = JSON.parse((await api(baseUrl, instructor, "GET", `/api/grading-runs/${runId}`)).text) as {
      status: string;
      progress: { total: number; done: number; ungradable: number };
    };
    if (run.status !== "running") {
      return {
        runMs: performance.now() - started,
        sessions: run.progress.total,
        ungradable: run.progress.ungradable,
        status: run.status,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function runStudents(input: StudentsInput): Promise<StudentsResult> {
  return new Promise((resolve, reject) => {
    // Node 20 picks a worker's module format before any loader runs: a JavaScript trampoline
    // loads the .ts entry through tsx.
    const entry = new URL("./soak-students.ts", import.meta.url).href;
    const trampoline = `import("tsx/esm/api").then(({ tsImport }) => tsImport(${JSON.stringify(entry)}, ${JSON.stringify(import.meta.url)}))`;
    const worker = new Worker(trampoline, { eval: true, workerData: input });
    worker.once("error", reject);
    worker.on("message", (message: "started" | StudentsResult) => {
      if (message === "started") return;
      resolve(message);
      void worker.terminate();
    });
  });
}

// Helpers

async function inBatches<T, R>(items: T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

process.exitCode = await main();
