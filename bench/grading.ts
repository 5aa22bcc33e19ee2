// npm run bench:grading — how long a grading run of 50 sessions takes at concurrency 1, 8 and 32.
// Every session has its own real agent (src/agent) on 127.0.0.1, reached over TCP the way the
// port-forward reaches a guest, and results go to a real SQLite file, so the numbers include
// spawning each check's shell, HTTP and the durable commit of each result.
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import type { Lab } from "../src/common/lab.ts";
import { createAgentClient } from "../src/server/grading/agent-client.ts";
import { GradingService } from "../src/server/grading/service.ts";
import { SqliteGradingRepository } from "../src/server/grading/sqlite-repository.ts";
import {
  aCheck,
  aGradingLab,
  aSession,
  FixedSessions,
} from "../src/server/grading/testing/grading-fixtures.ts";
import { startLoopbackAgents } from "../src/server/grading/testing/loopback-agents.ts";

const sessionCount = 50;
const concurrencies = [1, 8, 32];

const lab: Lab = aGradingLab([
  aCheck({ id: "hello-file", points: 2, run: "sleep 0.05; test -f ~/hello.txt" }),
  aCheck({ id: "notes-dir", points: 1, run: "sleep 0.05; test -d ~/notes" }),
  aCheck({ id: "report", points: 3, run: "sleep 0.05; cat ~/fraction" }),
]);

function percentile(sorted: readonly number[], p: number): number {
  // Nearest rank: the smallest value with at least p% of the samples at or below it.
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const ms = (value: number) => `${Math.round(value)} ms`.padStart(9);

async function main(): Promise<void> {
  const ids = Array.from(
    { length: sessionCount },
    (_, index) => `linux-basics-bench${String(index).padStart(3, "0")}`,
  );
  console.log(`Starting ${sessionCount} agents on 127.0.0.1 (${availableParallelism()} CPUs)...`);
  const agents = await startLoopbackAgents(ids);
  const dataRoot = await mkdtemp(path.join(tmpdir(), "bench-grading-"));
  try {
    for (const [index, id] of ids.entries()) {
      const home = agents.home(id);
      await chmod(home, 0o777);
      if (index % 2 === 0) await writeFile(path.join(home, "hello.txt"), "hello\n");
      if (index % 3 === 0) await mkdir(path.join(home, "notes"));
      await writeFile(path.join(home, "fraction"), `score=${(index % 5) / 4}\n`);
    }
    const sessions = new FixedSessions(ids.map((id, index) => aSession({ id, owner: `student${index}` })));
    const agentClient = createAgentClient({ connect: agents.connect, tokenFor: agents.tokenFor });

    console.log(
      `\nGrading ${sessionCount} sessions, ${lab.checks.length} checks each (each sleeps 0.05 s):\n`,
    );
    console.log("concurrency     total   per session p50   per session p99   sessions/s");
    for (const concurrency of concurrencies) {
      const dataDir = path.join(dataRoot, `c${concurrency}`);
      const repository = SqliteGradingRepository.open(dataDir);
      const durations: number[] = [];
      const grading = new GradingService({
        repository,
        sessions,
        labs: [lab],
        agents: agentClient,
        concurrency,
        onItemGraded: ({ durationMs }) => durations.push(durationMs),
      });
      try {
        const started = performance.now();
        const run = await grading.startRun(lab.id, "bench");
        await grading.settled(run.id);
        const total = performance.now() - started;
        const finished = await grading.getRun(run.id);
        const ungradable = finished.items.filter((item) => !item.result?.gradable);
        if (finished.status !== "completed" || ungradable.length > 0 || durations.length !== sessionCount) {
          throw new Error(
            `The run at concurrency ${concurrency} did not grade every session: ${ungradable[0]?.result?.reason ?? finished.status}`,
          );
        }
        durations.sort((a, b) => a - b);
        console.log(
          `${String(concurrency).padStart(11)} ${ms(total)}         ${ms(percentile(durations, 50))}         ` +
            `${ms(percentile(durations, 99))}   ${(sessionCount / (total / 1000)).toFixed(1).padStart(10)}`,
        );
      } finally {
        await grading.close();
        await repository.close();
      }
    }
    console.log(
      "\nPer session: from the moment its turn came to its result being committed (queueing excluded).\n" +
        "The agent runs at most 4 checks at a time per guest; here all guests share this machine's CPUs.",
    );
  } finally {
    await agents.close();
    await rm(dataRoot, { recursive: true, force: true });
  }
}

await main();
