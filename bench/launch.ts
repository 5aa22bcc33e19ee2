// How fast a launch gives a student a usable prompt with a scheduled class's warm VMs against a cold
// start, side by side in one run, and what a burst of launches does to the BFF's API traffic.
//   npm run bench:launch                    both parts
//   npm run bench:launch -- --part latency  realistic emulator timing (Running after 20 s, then
//                                           30-120 s of guest boot): 20 claimed and 10 cold launches
//   npm run bench:launch -- --part burst    300 launches within 10 s, without and with 100 warm VMs
// "Usable prompt": the launch's POST answered, the console connected, and an echo typed into it came
// back. The BFF runs in a process of its own as `npm start` runs it (soak-bff.ts).
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import type { ScheduledClass } from "../src/common/classes-api.ts";
import { ConsoleTestClient } from "../src/server/console/testing/console-client.ts";
import { labelKeys } from "../src/server/sessions/labels.ts";
import { defaultWriteRateLimits } from "../src/server/kube/write-rate.ts";
import { cheapHash } from "../src/server/testing/many-students.ts";
import type { SoakBffMessage } from "./soak-bff.ts";
import { startBenchCluster, type BenchCluster } from "./support/bench-cluster.ts";
import { api, signIn, type Person } from "./support/browser-api.ts";
import { kubeRequestsByVerb } from "./support/kube-requests.ts";
import { forkBff, type BffProcess } from "./support/bff-process.ts";

const { values: args } = parseArgs({
  options: {
    part: { type: "string", default: "both" },
    warm: { type: "string", default: "20" },
    cold: { type: "string", default: "10" },
    students: { type: "string", default: "300" },
    "burst-warm": { type: "string", default: "100" },
  },
});
const metricsToken = "launch-bench-metrics-token-long-enough";
const password = "bench";
const labYaml = (id: string) => `id: ${id}
title: ${id}
vm:
  size: small
  image: quay.io/containerdisks/fedora:41
`;
/** Room and pods for the burst's 300 VMs: the refusals measured are the BFF's, not the scheduler's. */
const bigCluster = `nodes:
${["node01", "node02", "node03", "node04"].map((name) => `  - { name: ${name}, cpu: "64", memory: 512Gi, pods: 250 }`).join("\n")}
`;

async function main(): Promise<void> {
  if (args.part === "both" || args.part === "latency") await latency();
  if (args.part === "both" || args.part === "burst") {
    await burst(0);
    await burst(Number(args["burst-warm"]));
  }
}

// Part 1: claimed against cold, on realistic timing

async function latency(): Promise<void> {
  const warmCount = Number(args.warm);
  const coldCount = Number(args.cold);
  console.log(
    `Launch to prompt, realistic timing: ${warmCount} launches claiming warm VMs, ${coldCount} cold`,
  );
  await withBff(
    "launch",
    { timing: "realistic" },
    ["warm-lab", "cold-lab"],
    warmCount + coldCount,
    async (bff, people) => {
      const [ivan, ...students] = people;
      const coldStudents = students.slice(0, coldCount);
      const warmStudents = students.slice(coldCount);
      await schedule(bff, ivan!, "warm-lab", warmCount);
      const colds = Promise.all(
        coldStudents.map((person) => launchToPrompt(bff, person, "cold-lab", 300_000)),
      );
      const booted = performance.now();
      await until(
        async () => (await classOf(bff, ivan!)).pool.ready >= warmCount,
        600_000,
        "the warm pool ready",
      );
      console.log(
        `  the pool had ${warmCount} VMs booted and ready ${seconds(performance.now() - booted)} s after scheduling`,
      );
      const warm: Launch[] = [];
      for (const person of warmStudents) {
        warm.push(await launchToPrompt(bff, person, "warm-lab", 60_000));
      }
      const cold = await colds;
      printLatency("claimed (warm)", warm);
      printLatency("cold", cold);
      const claimedP50 = percentile(
        warm.map((each) => each.promptMs),
        50,
      );
      const coldP50 = percentile(
        cold.map((each) => each.promptMs),
        50,
      );
      console.log(
        `  claimed is ${(coldP50 / claimedP50).toFixed(0)}x faster at p50 (goal: p50 < 2 s, p99 < 5 s)`,
      );
      const starts = new Set(warm.map((each) => each.start));
      if (!(starts.size === 1 && starts.has("warm")))
        console.log("  WARNING: some launches on the class's lab started cold");
    },
  );
}

interface Launch {
  start: string;
  answeredMs: number;
  promptMs: number;
}

async function launchToPrompt(
  bff: BffProcess<SoakBffMessage>,
  person: Person,
  labId: string,
  timeoutMs: number,
): Promise<Launch> {
  const clicked = performance.now();
  const launched = await api(bff.url, person, "POST", "/api/sessions", { labId });
  if (launched.status !== 201)
    throw new Error(`launch for ${person.username}: ${launched.status} ${launched.text}`);
  const session = JSON.parse(launched.text) as { id: string; start: string };
  const answeredMs = performance.now() - clicked;
  const client = await ConsoleTestClient.connect(bff.url, session.id, { cookie: person.cookie });
  try {
    await client.untilLive(timeoutMs);
    // A cold guest has no shell until it booted: ask again every 2 s, as a student would press Enter.
    const marker = `ready-${session.id.slice(-8)}`;
    const [head, tail] = [marker.slice(0, 3), marker.slice(3)];
    const ask = () => client.type(`echo ${head}''${tail}\r`);
    ask();
    const again = setInterval(ask, 2_000);
    try {
      await client.untilScreenShows(marker, timeoutMs);
    } finally {
      clearInterval(again);
    }
  } finally {
    client.close();
  }
  return { start: session.start, answeredMs, promptMs: performance.now() - clicked };
}

function printLatency(label: string, launches: Launch[]): void {
  const prompt = launches.map((each) => each.promptMs);
  const answered = launches.map((each) => each.answeredMs);
  console.log(
    `  ${label.padEnd(15)} ${launches.length} launches: to prompt p50 ${seconds(percentile(prompt, 50))} s, ` +
      `p99 ${seconds(percentile(prompt, 99))} s, max ${seconds(Math.max(...prompt))} s; ` +
      `POST answered p50 ${seconds(percentile(answered, 50))} s`,
  );
}

// Part 2: the burst

async function burst(warmCount: number): Promise<void> {
  const studentCount = Number(args.students);
  console.log(`\nBurst: ${studentCount} launches within 10 s, ${warmCount} warm VMs waiting`);
  await withBff(
    "burst",
    { timing: "fast", clusterYaml: bigCluster, guests: warmCount > 0 ? "sandbox" : "none" },
    ["burst-lab"],
    studentCount,
    async (bff, people, bench) => {
      const [ivan, ...students] = people;
      if (warmCount > 0) {
        await schedule(bff, ivan!, "burst-lab", warmCount);
        await until(
          async () => (await classOf(bff, ivan!)).pool.ready >= warmCount,
          600_000,
          "the warm pool ready",
        );
      }
      const before = await kubeRequestsByVerb(bff.url, metricsToken);
      const perSecond: number[] = [];
      let last = before;
      const sampler = setInterval(() => {
        void kubeRequestsByVerb(bff.url, metricsToken).then((now) => {
          perSecond.push(total(now) - total(last));
          last = now;
        });
      }, 1_000);
      const startedAt = performance.now();
      const outcomes = new Map<
        string,
        { firstStatus: number; reason?: string; tries: number; start?: string; tookMs?: number }
      >();
      await Promise.all(
        students.map(async (person, index) => {
          await sleep((index * 10_000) / students.length);
          const clicked = performance.now();
          let tries = 0;
          for (;;) {
            tries += 1;
            const answer = await api(bff.url, person, "POST", "/api/sessions", { labId: "burst-lab" });
            const body = JSON.parse(answer.text) as { start?: string; error?: { reason?: string } };
            if (tries === 1)
              outcomes.set(person.username, {
                firstStatus: answer.status,
                reason: body.error?.reason,
                tries,
              });
            const outcome = outcomes.get(person.username)!;
            outcome.tries = tries;
            if (answer.status === 201) {
              outcome.start = body.start;
              outcome.tookMs = performance.now() - clicked;
              return;
            }
            if (answer.status !== 503 || body.error?.reason !== "launch_busy")
              throw new Error(`launch for ${person.username}: ${answer.status} ${answer.text}`);
            await sleep(Number(answer.headers.get("retry-after")) * 1000);
          }
        }),
      );
      const elapsed = performance.now() - startedAt;
      clearInterval(sampler);
      const after = await kubeRequestsByVerb(bff.url, metricsToken);
      const vms = (await bench.cluster.virtualMachines.list()).items.filter(
        (vm) => vm.metadata.labels?.[labelKeys.warmFor] === undefined,
      );
      const owners = new Set(vms.map((vm) => vm.metadata.labels?.[labelKeys.ownerId]));
      const all = [...outcomes.values()];
      const refused = all.filter((each) => each.firstStatus !== 201);
      const byVerb = Object.fromEntries(
        Object.keys(after).map((verb) => [verb, (after[verb] ?? 0) - (before[verb] ?? 0)]),
      );
      const writes = ["create", "patch", "update", "delete"].reduce(
        (sum, verb) => sum + (byVerb[verb] ?? 0),
        0,
      );
      const took = all.map((each) => each.tookMs ?? 0);
      const doneBy = (start: string) =>
        all.filter((each) => each.start === start).map((each) => each.tookMs ?? 0);
      console.log(
        `  every student had a session ${seconds(elapsed)} s after the first click; from each click to its session ` +
          `p50 ${seconds(percentile(took, 50))} s, p99 ${seconds(percentile(took, 99))} s (retries included)`,
      );
      const split = (start: string, what: string) => {
        const times = doneBy(start);
        return times.length === 0
          ? `none ${what}`
          : `${times.length} ${what} (p50 ${seconds(percentile(times, 50))} s)`;
      };
      console.log(`  ${split("warm", "claimed a warm VM")}, ${split("cold", "started cold")}`);
      console.log(
        `  ${refused.length} were first told "launch_busy" with a Retry-After, ${all.reduce((sum, each) => sum + each.tries, 0) - all.length} retries in all`,
      );
      console.log(
        `  session VMs: ${vms.length} for ${owners.size} students (nothing twice: ${vms.length === owners.size && owners.size === students.length ? "yes" : "NO"})`,
      );
      console.log(
        `  API requests the BFF sent: ${total(byVerb)} (${(total(byVerb) / (elapsed / 1000)).toFixed(1)}/s on average, busiest second ${Math.max(0, ...perSecond)}); ` +
          `writes ${writes} (bound: ${defaultWriteRateLimits.perSecond}/s, bursts of ${defaultWriteRateLimits.burst}); by verb ${JSON.stringify(byVerb)}`,
      );
    },
  );
}

// The BFF and its people

async function withBff(
  name: string,
  options: Parameters<typeof startBenchCluster>[1],
  labIds: string[],
  studentCount: number,
  body: (bff: BffProcess<SoakBffMessage>, people: Person[], bench: BenchCluster) => Promise<void>,
): Promise<void> {
  const bench = await startBenchCluster(name, options);
  let bff: BffProcess<SoakBffMessage> | undefined;
  try {
    const labsDir = path.join(bench.stateDir, "labs");
    await mkdir(labsDir);
    for (const id of labIds) await writeFile(path.join(labsDir, `${id}.yaml`), labYaml(id));
    const passwordHash = cheapHash(password);
    const usernames = [
      "ivan",
      ...Array.from({ length: studentCount }, (_, index) => `student-${String(index).padStart(3, "0")}`),
    ];
    const users = usernames.map((username) => ({
      username,
      role: username === "ivan" ? "instructor" : "student",
      passwordHash,
    }));
    await writeFile(path.join(bench.stateDir, "users.json"), JSON.stringify({ users }));
    bff = await forkBff<SoakBffMessage>("soak-bff.ts", {
      kubeconfigPath: bench.emulator.consoleKubeconfigPath,
      env: {
        DATA_DIR: path.join(bench.stateDir, "data"),
        LABS_DIR: labsDir,
        LAB_USERS_FILE: path.join(bench.stateDir, "users.json"),
        METRICS_TOKEN: metricsToken,
        LAB_MAX_CONNECTIONS_PER_ADDRESS: "100000",
      },
    });
    await until(async () => (await fetch(`${bff!.url}/api/readyz`)).status === 200, 60_000, "the BFF ready");
    const people: Person[] = [];
    for (let start = 0; start < usernames.length; start += 25) {
      people.push(
        ...(await Promise.all(
          usernames.slice(start, start + 25).map((username) => signIn(bff!.url, username, password)),
        )),
      );
    }
    await body(bff, people, bench);
  } finally {
    await bff?.stop();
    await bench.emulator.stop();
    await rm(bench.stateDir, { recursive: true, force: true });
  }
}

async function schedule(
  bff: BffProcess<SoakBffMessage>,
  ivan: Person,
  labId: string,
  expected: number,
): Promise<void> {
  const startsAt = new Date(Date.now() + 5 * 60_000).toISOString();
  const endsAt = new Date(Date.now() + 2 * 3_600_000).toISOString();
  const answer = await api(bff.url, ivan, "POST", "/api/classes", { labId, startsAt, endsAt, expected });
  if (answer.status !== 201) throw new Error(`scheduling: ${answer.status} ${answer.text}`);
}

async function classOf(bff: BffProcess<SoakBffMessage>, ivan: Person): Promise<ScheduledClass> {
  const answer = await api(bff.url, ivan, "GET", "/api/classes");
  const [first] = (JSON.parse(answer.text) as { items: ScheduledClass[] }).items;
  if (!first) throw new Error("the class is not listed");
  return first;
}

// Small things

function total(byVerb: Record<string, number>): number {
  return Object.values(byVerb).reduce((sum, count) => sum + count, 0);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

await main();
