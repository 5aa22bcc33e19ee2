// What one BFF replica holds, and how fast duties move between replicas (docs/scaling.md):
//  - one replica's memory (after a full GC): idle; with N sessions in its watch cache; with N open
//    consoles, each with a scrolled screen; with a second viewer (an observer) on each;
//  - the Kubernetes requests leases cost a replica, per second, at the default timing;
//  - how long the reaper and grading duties take to move to the other replica after SIGTERM (the
//    leases are released) and after SIGKILL (they run out).
//
//   npm run bench:replicas [-- --sessions 40 --lease-seconds 15]
//
// The emulator (sandboxed guests) runs here; the replicas run as processes of their own, as
// `npm start` runs them, against one PostgreSQL.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startTestEmulator } from "../src/emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../src/server/console/testing/console-client.ts";
import { reaperLeaseName } from "../src/server/replicas/coordination.ts";
import { gradingLeaseName } from "../src/server/replicas/grading-duty.ts";
import { createTestSchema, startTestPostgres } from "../src/server/db/postgres/testing/test-postgres.ts";
import { createLeaseClient } from "../src/server/kube/leases.ts";
import { startReplica, type Replica } from "../src/server/testing/replicas.ts";
import { TestBrowser } from "../src/server/testing/test-bff.ts";

const { values: args } = parseArgs({
  options: {
    sessions: { type: "string", default: "40" },
    "lease-seconds": { type: "string", default: "15" },
  },
});
const sessionCount = Number(args.sessions);
const leaseSeconds = Number(args["lease-seconds"]);
const metricsToken = "bench-metrics-token-0123456789";
const mb = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);

function labYaml(index: number): string {
  return `id: bench-${String(index).padStart(3, "0")}
title: Bench ${index}
description: One of the bench's labs.
vm: { size: small, image: quay.io/containerdisks/fedora:41 }
session: { minutes: 60, extendMinutes: 15, maxExtensions: 2 }
checks:
  - { id: tmp, title: /tmp exists, run: "test -d /tmp" }
`;
}

async function until<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs: number,
  what: string,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function kubeRequests(replica: Replica): Promise<Map<string, number>> {
  const response = await fetch(`${replica.url}/metrics`, {
    headers: { authorization: `Bearer ${metricsToken}` },
  });
  const counts = new Map<string, number>();
  for (const line of (await response.text()).split("\n")) {
    const match = /^lab_console_kube_requests_total\{([^}]*)\} (\d+)/.exec(line);
    const verb = match?.[1] ? /verb="([^"]+)"/.exec(match[1])?.[1] : undefined;
    if (verb) counts.set(verb, (counts.get(verb) ?? 0) + Number(match?.[2]));
  }
  return counts;
}

const workDir = await mkdtemp(path.join(tmpdir(), "bench-replicas-"));
const labsDir = path.join(workDir, "labs");
await mkdir(labsDir);
for (let index = 0; index < sessionCount; index++) {
  await writeFile(path.join(labsDir, `bench-${index}.yaml`), labYaml(index));
}
const emulator = await startTestEmulator({ guests: "sandbox", deployRbac: true });
const postgres = await startTestPostgres();
const schema = await createTestSchema(postgres);
const leases = createLeaseClient(emulator.kubeConfig, { namespace: "lab-console" });
const environment = (name: string): Record<string, string> => ({
  LAB_KUBECONFIG: emulator.bffKubeconfigPath(),
  AUTH_MODE: "demo",
  HOST: "127.0.0.1",
  PORT: "0",
  DATA_DIR: path.join(workDir, name),
  LABS_DIR: labsDir,
  DATABASE_URL: schema.url,
  SESSION_SECRET: "a-session-secret-every-replica-shares-0123",
  AGENT_TOKEN_SECRET: "an-agent-token-secret-every-replica-shares",
  LAB_MAX_SESSIONS_PER_STUDENT: String(sessionCount),
  LAB_LEASE_DURATION_SECONDS: String(leaseSeconds),
  METRICS_TOKEN: metricsToken,
  POD_NAME: name,
  LOG_LEVEL: "warn",
});
const clients: ConsoleTestClient[] = [];
const replicas: Replica[] = [];

try {
  const first = await startReplica(environment("replica-a"));
  replicas.push(first);
  const rows: [string, Awaited<ReturnType<Replica["stats"]>>][] = [];
  await until(
    () => leases.get(gradingLeaseName),
    (lease) => lease?.holderIdentity === first.identity,
    30_000,
    "duties",
  );
  rows.push(["idle, no sessions", await first.stats()]);

  // Launches are rate-limited per person (a burst of 10): four people launch.
  const launchers = ["alice", "bob", "tara", "ivan"];
  const browsers = new Map<string, TestBrowser>();
  for (const name of launchers) {
    const browser = new TestBrowser(first.url);
    await browser.post("/api/auth/login", { username: name, password: "demo" });
    browsers.set(name, browser);
  }
  const owned: { id: string; owner: string }[] = [];
  for (let index = 0; index < sessionCount; index++) {
    const owner = launchers[index % launchers.length]!;
    const labId = `bench-${String(index).padStart(3, "0")}`;
    let created = await browsers.get(owner)!.post("/api/sessions", { labId });
    while (created.status === 429) {
      await new Promise((resolve) =>
        setTimeout(resolve, Number(created.headers.get("retry-after") ?? "1") * 1000),
      );
      created = await browsers.get(owner)!.post("/api/sessions", { labId });
    }
    if (created.status !== 201)
      throw new Error(`launch ${index}: ${created.status} ${JSON.stringify(created.body)}`);
    owned.push({ id: created.body.id as string, owner });
  }
  await until(
    () => browsers.get("tara")!.get(`/api/sessions?pageSize=${sessionCount}`),
    (answer) => answer.body?.counts?.running === sessionCount,
    120_000,
    "every session running",
  );
  rows.push([`${sessionCount} sessions, no console`, await first.stats()]);

  const cookies = new Map<string, string>();
  for (const name of launchers) cookies.set(name, await signInCookie(first.url, name));
  for (const { id, owner } of owned) {
    clients.push(await ConsoleTestClient.connect(first.url, id, { cookie: cookies.get(owner)! }));
  }
  // A screenful and more of scrollback on each, as after some work (typing once connected).
  await Promise.all(
    clients.map((client) =>
      client.until(
        () => client.lastMessage("status")?.state === "connected",
        "the console connected",
        60_000,
      ),
    ),
  );
  for (const client of clients) client.type("seq 1 2000\r");
  await Promise.all(clients.map((client) => client.untilScreenShows("2000\n", 60_000)));
  rows.push([`${sessionCount} consoles, 1 viewer each`, await first.stats()]);

  const taraCookie = await signInCookie(first.url, "tara");
  for (const { id } of owned) {
    clients.push(await ConsoleTestClient.connect(first.url, id, { cookie: taraCookie, mode: "observe" }));
  }
  await until(
    () => first.stats(),
    (stats) => stats.consoles.viewers === 2 * sessionCount,
    30_000,
    "every observer attached",
  );
  rows.push([`${sessionCount} consoles, 2 viewers each`, await first.stats()]);

  console.log(`\nOne replica's memory (MB, after a full GC; ${sessionCount} sessions)`);
  console.log(`  ${"".padEnd(34)}${"RSS".padStart(8)}${"heap".padStart(8)}${"buffers".padStart(9)}`);
  for (const [label, stats] of rows) {
    const { rss, heapUsed, arrayBuffers } = stats.memory;
    console.log(
      `  ${label.padEnd(34)}${mb(rss).padStart(8)}${mb(heapUsed).padStart(8)}${mb(arrayBuffers).padStart(9)}`,
    );
  }
  for (const client of clients.splice(0)) client.close();

  // Lease traffic: two replicas, idle, over a few renewal periods.
  const second = await startReplica(environment("replica-b"));
  replicas.push(second);
  await new Promise((resolve) => setTimeout(resolve, leaseSeconds * 1000));
  const windowMs = leaseSeconds * 2 * 1000;
  const before = await Promise.all(replicas.map(kubeRequests));
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const after = await Promise.all(replicas.map(kubeRequests));
  console.log(
    `\nKubernetes requests per second, per replica, over ${windowMs / 1000} s (lease ${leaseSeconds} s)`,
  );
  for (const [index, replica] of replicas.entries()) {
    const verbs = ["get", "list", "update", "create", "delete", "watch"]
      .map(
        (verb) =>
          `${verb} ${(((after[index]?.get(verb) ?? 0) - (before[index]?.get(verb) ?? 0)) / (windowMs / 1000)).toFixed(2)}`,
      )
      .join(", ");
    console.log(`  ${replica.identity}: ${verbs}`);
  }

  // Handover: the grading worker stops cleanly; then the replica that took over is killed.
  console.log(`\nDuties moving to the other replica (lease ${leaseSeconds} s)`);
  for (const how of ["SIGTERM", "SIGKILL"] as const) {
    const holderIdentity = (await leases.get(gradingLeaseName))?.holderIdentity;
    const holder = replicas.find((each) => each.identity === holderIdentity)!;
    const other = replicas.find((each) => each !== holder)!;
    const held: string[] = [];
    for (const name of [gradingLeaseName, reaperLeaseName]) {
      if ((await leases.get(name))?.holderIdentity === holder.identity) held.push(name);
    }
    const startedAt = performance.now();
    if (how === "SIGTERM") await holder.stop();
    else await holder.kill();
    replicas.splice(replicas.indexOf(holder), 1);
    const pending = new Set(held);
    await until(
      async () => {
        for (const name of [...pending]) {
          if ((await leases.get(name))?.holderIdentity !== other.identity) continue;
          pending.delete(name);
          console.log(`  ${how}: ${name} taken over after ${Math.round(performance.now() - startedAt)} ms`);
        }
        return pending.size;
      },
      (left) => left === 0,
      leaseSeconds * 4000,
      "the duties to move",
    );
    // Two replicas again for the next round; the one that took over holds the duties.
    if (how === "SIGTERM") replicas.push(await startReplica(environment("replica-c")));
  }
} finally {
  for (const client of clients) client.close();
  await Promise.all(replicas.map((replica) => replica.kill()));
  await schema.drop();
  await postgres.close();
  await emulator.close();
  await rm(workDir, { recursive: true, force: true });
}
