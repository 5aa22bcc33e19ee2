// What polling dashboards cost: N simulated browsers (10, 100, 500) poll the sessions list every 2 s
// over 1,000 sessions, against the BFF reading from its watch cache and against a naive BFF that
// lists from the cluster on every poll. Prints BFF latency (p50/p99) and the requests per second
// the Kubernetes API received, side by side.
//
//   npm run bench:dashboard [-- --seconds 30 --clients 10,100,500 --sessions 1000 --modes cache,direct]
//
// The emulator runs as its own process (as with `npm start`); the 1,000 VMs are created Halted so no
// guest starts. Each BFF runs in this process, the browsers in a worker thread.
import { rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import type { FastifyInstance } from "fastify";
import type { Me } from "../src/common/api.ts";
import type { Lab } from "../src/common/lab.ts";
import { buildApp } from "../src/server/app.ts";
import { createDemoAuthenticator } from "../src/server/auth/authenticator.ts";
import { encodeSignIn } from "../src/server/auth/current-user.ts";
import { SqliteEndedSignInRepository } from "../src/server/auth/ended-sign-ins/sqlite-repository.ts";
import { SignIns } from "../src/server/auth/sign-ins.ts";
import { hashPassword } from "../src/server/auth/passwords.ts";
import { SqliteAuditRepository } from "../src/server/audit/sqlite-repository.ts";
import { SqliteGradingRepository } from "../src/server/grading/sqlite-repository.ts";
import { SqliteAnnouncementRepository } from "../src/server/announcements/sqlite-repository.ts";
import { SqliteClassRepository } from "../src/server/classes/sqlite-repository.ts";
import { createClusterClient, type ClusterClient } from "../src/server/kube/client.ts";
import { createClusterFacts } from "../src/server/kube/cluster-facts.ts";
import { KubeRequestCounter } from "../src/server/kube/request-counter.ts";
import { sessionsSelector } from "../src/server/sessions/labels.ts";
import type { SessionsReadMode } from "../src/server/sessions/reads.ts";
import type { BrowsersInput, BrowsersResult } from "./dashboard-browsers.ts";
import { benchNamespace, createHaltedSession, startBenchCluster } from "./support/bench-cluster.ts";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "30" },
    clients: { type: "string", default: "10,100,500" },
    sessions: { type: "string", default: "1000" },
    modes: { type: "string", default: "cache,direct" },
  },
});
const seconds = Number(args.seconds);
const clientCounts = args.clients.split(",").map(Number);
const sessionCount = Number(args.sessions);
const modes = args.modes.split(",") as SessionsReadMode[];
const intervalMs = 2000;

const labs: Lab[] = ["linux-basics", "git-workflow"].map((id) => ({
  id,
  title: id,
  description: "",
  vm: { cpu: 1, memory: "2Gi", image: "quay.io/containerdisks/fedora:41", nested: false, cloudInit: null },
  session: { minutes: 60, extendMinutes: 15, maxExtensions: 2, terminals: 0, consoles: ["serial"] },
  checks: [],
}));
const studentName = (index: number) => `student-${String(index).padStart(3, "0")}`;

interface Bff {
  mode: SessionsReadMode;
  app: FastifyInstance;
  url: string;
  kubeRequests: KubeRequestCounter;
  /** Time inside the BFF process per request (arrival to last byte written), this scenario. */
  serverMs: number[];
}

interface Row {
  mode: SessionsReadMode;
  browsers: number;
  polls: number;
  p50: number;
  p99: number;
  serverP99: number;
  notModified: number;
  failed: number;
  kubePerSecond: number;
}

async function main(): Promise<void> {
  const { stateDir, emulator, kubeConfig, cluster: seeder } = await startBenchCluster("dashboard");
  try {
    const seedStarted = Date.now();
    await seedHaltedSessions(seeder, sessionCount);
    console.log(
      `Seeded ${sessionCount} Halted session VMs in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s.`,
    );

    const endedSignIns = SqliteEndedSignInRepository.open(stateDir);
    const signIns = await SignIns.open({ store: endedSignIns });
    const passwordHash = await hashPassword("bench");
    const students = Array.from({ length: Math.ceil(sessionCount / labs.length) }, (_, index) =>
      studentName(index),
    );
    const authenticator = await createDemoAuthenticator([
      { username: "tara", role: "ta", sections: [], passwordHash },
      ...students.map((username) => ({ username, role: "student" as const, sections: [], passwordHash })),
    ]);
    // Nothing is graded here: the BFFs share an empty grading database and reach no agent.
    const gradingRepository = SqliteGradingRepository.open(stateDir);
    const classRepository = SqliteClassRepository.open(stateDir);
    const announcementRepository = SqliteAnnouncementRepository.open(stateDir);
    const auditRepository = SqliteAuditRepository.open(stateDir);
    const bffs: Bff[] = [];
    for (const mode of modes) {
      const kubeRequests = new KubeRequestCounter();
      const cluster = createClusterClient(kubeConfig, {
        namespace: benchNamespace,
        labelSelector: sessionsSelector,
        counter: kubeRequests,
      });
      const app = await buildApp({
        cluster,
        sessionsReadMode: mode,
        authenticator,
        signIns,
        cookieSecret: "bench-secret-bench-secret-bench-secret",
        labs,
        gradingRepository,
        classRepository,
        announcementRepository,
        connectToAgent: () => Promise.reject(new Error("the dashboard bench grades nothing")),
        agentKeySecret: "bench-agent-secret-bench-agent-secret",
        agentFile: Buffer.alloc(0),
        clusterFacts: createClusterFacts(kubeConfig, kubeRequests),
        kubeRequests,
        auditRepository,
        quotas: { perStudent: 1, perLab: null, total: null },
        allowedOrigins: [],
        // Every simulated browser connects from 127.0.0.1: the bench measures the BFF, not the cap
        // per address.
        serverLimits: { maxConnectionsPerAddress: Number.MAX_SAFE_INTEGER },
      });
      await app.listen({ host: "127.0.0.1", port: 0 });
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const bff: Bff = { mode, app, kubeRequests, url, serverMs: [] };
      // Measured on the raw server as well: the browsers' own numbers include their worker's delays.
      app.server.on("request", (_request, response) => {
        const arrivedAt = performance.now();
        response.once("finish", () => bff.serverMs.push(performance.now() - arrivedAt));
      });
      bffs.push(bff);
    }
    for (const bff of bffs) await waitUntilReady(bff);
    await warmUp(bffs, signIns);

    const rows: Row[] = [];
    for (const browsers of clientCounts) {
      // One browser in ten is staff looking at every session; the rest are students seeing their own.
      const people: Me[] = Array.from({ length: browsers }, (_, index) =>
        index % 10 === 0
          ? { username: "tara", role: "ta", sections: [] }
          : { username: students[index % students.length]!, role: "student", sections: [] },
      );
      for (const bff of bffs) {
        const cookies = people.map(
          (person) => `lab_sign_in=${bff.app.signCookie(encodeSignIn(signIns.create(person)))}`,
        );
        rows.push(await runScenario(bff, cookies));
        printRow(rows.at(-1)!);
        await settle(bff);
      }
    }
    printTable(rows);
    for (const bff of bffs) await bff.app.close();
    await signIns.close();
    await gradingRepository.close();
    await classRepository.close();
    await announcementRepository.close();
    await auditRepository.close();
    await endedSignIns.close();
  } finally {
    await emulator.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

async function seedHaltedSessions(cluster: ClusterClient, count: number): Promise<void> {
  const specs = Array.from({ length: count }, (_, index) => ({
    lab: labs[index % labs.length]!,
    owner: studentName(Math.floor(index / labs.length)),
  }));
  let next = 0;
  const worker = async () => {
    while (next < specs.length) {
      const { lab, owner } = specs[next++]!;
      // Halted: a dashboard over 1,000 VMs, not 1,000 guests on a laptop.
      await createHaltedSession(cluster, lab, owner);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

/** The cache lists after seeding, so ready means all sessions are in it. */
async function waitUntilReady(bff: Bff): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ready = await fetch(`${bff.url}/api/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the BFF's cache did not sync within 60 s");
}

function runScenario(bff: Bff, cookies: string[]): Promise<Row> {
  const input: BrowsersInput = {
    url: `${bff.url}/api/sessions`,
    cookies,
    seconds,
    intervalMs,
    timeoutMs: 10_000,
  };
  let before = 0;
  let startedAt = 0;
  return new Promise((resolve, reject) => {
    // Node 20 picks a worker's module format before any loader runs, so a .ts entry needs this
    // small JavaScript trampoline that loads it through tsx.
    const entry = new URL("./dashboard-browsers.ts", import.meta.url).href;
    const trampoline = `import("tsx/esm/api").then(({ tsImport }) => tsImport(${JSON.stringify(entry)}, ${JSON.stringify(import.meta.url)}))`;
    const worker = new Worker(trampoline, { eval: true, workerData: input });
    worker.once("error", reject);
    worker.once("message", () => {
      // Counted from here: loading the worker is not part of the scenario.
      before = bff.kubeRequests.total();
      startedAt = performance.now();
      bff.serverMs = [];
      worker.once("message", (result: BrowsersResult) => report(result));
    });
    const report = (result: BrowsersResult) => {
      const elapsed = (performance.now() - startedAt) / 1000;
      const percentile = (samples: number[], p: number) => {
        const sorted = [...samples].sort((a, b) => a - b);
        return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
      };
      resolve({
        mode: bff.mode,
        browsers: cookies.length,
        polls: result.latenciesMs.length + result.timedOut,
        p50: percentile(result.latenciesMs, 50),
        p99: result.timedOut > 0 ? Infinity : percentile(result.latenciesMs, 99),
        serverP99: percentile(bff.serverMs, 99),
        notModified: result.notModified,
        failed: result.failed + result.timedOut,
        kubePerSecond: (bff.kubeRequests.total() - before) / elapsed,
      });
      void worker.terminate();
    };
  });
}

/** A few polls each first, so the first scenario does not measure the JIT compiler. */
async function warmUp(bffs: Bff[], signIns: SignIns): Promise<void> {
  for (const bff of bffs) {
    const cookie = `lab_sign_in=${bff.app.signCookie(encodeSignIn(signIns.create({ username: "tara", role: "ta", sections: [] })))}`;
    for (let poll = 0; poll < 20; poll += 1) {
      await fetch(`${bff.url}/api/sessions`, { headers: { cookie } }).then((response) =>
        response.arrayBuffer(),
      );
    }
  }
}

/** Lets requests abandoned by timed-out browsers finish before the next scenario measures. */
async function settle(bff: Bff): Promise<void> {
  let last = -1;
  while (bff.kubeRequests.total() !== last) {
    last = bff.kubeRequests.total();
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

const header = [
  "mode",
  "browsers",
  "polls",
  "p50 ms",
  "p99 ms",
  "in-BFF p99 ms",
  "304s",
  "failed",
  "kube API req/s",
];
const format = (row: Row) => [
  row.mode,
  String(row.browsers),
  String(row.polls),
  row.p50.toFixed(1),
  Number.isFinite(row.p99) ? row.p99.toFixed(1) : "timeout",
  row.serverP99.toFixed(1),
  String(row.notModified),
  String(row.failed),
  row.kubePerSecond.toFixed(1),
];

function printRow(row: Row): void {
  console.log(header.map((name, index) => `${name}=${format(row)[index]}`).join("  "));
}

function printTable(rows: Row[]): void {
  const cells = [header, ...rows.map(format)];
  const widths = header.map((_, column) => Math.max(...cells.map((line) => line[column]!.length)));
  console.log(`\n${sessionCount} sessions, browsers poll every ${intervalMs / 1000} s for ${seconds} s:\n`);
  for (const line of cells)
    console.log(line.map((cell, column) => cell.padStart(widths[column]!)).join("  "));
  console.log("\ngoal: kube API req/s independent of browsers in cache mode; p99 < 20 ms at 500 browsers.");
}

await main();
