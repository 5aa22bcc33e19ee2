// npm run bench:grading [-- --through loopback|emulator --sessions 50]
//
// How long a grading run takes at concurrency 1, 8 and 32, with the real agent (src/agent/lab_agent/)
// per session and results committed to a real SQLite file, so the numbers include spawning each
// check's shell, HTTP, signing every request and verifying every answer, and the durable commit of
// each result.
//   loopback (default): the agents listen on 127.0.0.1 and are reached over plain TCP.
//   emulator: real sessions on the KubeVirt emulator (sandboxed guests, the agent delivered by
//     cloud-init exactly as at launch), reached through the emulator's portforward subresource:
//     HTTPS, a websocket upgrade and the guest's port relay on every request.
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { agentKey } from "../src/server/agent/key.ts";
import type { Lab } from "../src/common/lab.ts";
import { startTestEmulator } from "../src/emulator/testing/start.ts";
import { createAgentClient, type AgentClient } from "../src/server/agent/client.ts";
import { AgentUnreachableError } from "../src/server/agent/errors.ts";
import { loadAgentFile } from "../src/server/agent/agent-file.ts";
import { createAgentDelivery } from "../src/server/agent/delivery.ts";
import { createPortForwardTransport } from "../src/server/agent/portforward-transport.ts";
import { GradingService } from "../src/server/grading/service.ts";
import { SqliteGradingRepository } from "../src/server/grading/sqlite-repository.ts";
import {
  aCheck,
  aGradingLab,
  aSession,
  FixedSessions,
} from "../src/server/grading/testing/grading-fixtures.ts";
import { startLoopbackAgents } from "../src/server/agent/testing/loopback-agents.ts";
import { createClusterClient } from "../src/server/kube/client.ts";
import { KubeRequestCounter } from "../src/server/kube/request-counter.ts";
import { sessionsSelector } from "../src/server/sessions/labels.ts";
import { benchNamespace, launchSession, waitUntilRunning } from "./support/bench-cluster.ts";

const { values: args } = parseArgs({
  options: {
    through: { type: "string", default: "loopback" },
    sessions: { type: "string", default: "50" },
  },
});
const sessionCount = Number(args.sessions);
const concurrencies = [1, 8, 32];

const lab: Lab = aGradingLab(
  [
    aCheck({ id: "hello-file", points: 2, run: "sleep 0.05; test -f ~/hello.txt" }),
    aCheck({ id: "notes-dir", points: 1, run: "sleep 0.05; test -d ~/notes" }),
    aCheck({ id: "report", points: 3, run: "sleep 0.05; cat ~/fraction" }),
  ],
  // Small VMs, so that many fit on the emulator's nodes.
  {
    vm: {
      cpu: 1,
      memory: "512Mi",
      image: "quay.io/containerdisks/fedora:41",
      nested: false,
      cloudInit: null,
    },
  },
);

interface Target {
  ids: string[];
  agents: AgentClient;
  close(): Promise<void>;
}

function percentile(sorted: readonly number[], p: number): number {
  // Nearest rank: the smallest value with at least p% of the samples at or below it.
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const ms = (value: number) => `${Math.round(value)} ms`.padStart(9);

function sessionIds(): string[] {
  return Array.from(
    { length: sessionCount },
    (_, index) => `linux-basics-bench${String(index).padStart(3, "0")}`,
  );
}

/** Agents on 127.0.0.1, one per session, each with its own home holding that session's work. */
async function loopbackTarget(): Promise<Target> {
  const ids = sessionIds();
  console.log(`Starting ${sessionCount} agents on 127.0.0.1 (${availableParallelism()} CPUs)...`);
  const agents = await startLoopbackAgents(ids);
  for (const [index, id] of ids.entries()) {
    const home = agents.home(id);
    await chmod(home, 0o777);
    if (index % 2 === 0) await writeFile(path.join(home, "hello.txt"), "hello\n");
    if (index % 3 === 0) await mkdir(path.join(home, "notes"));
    await writeFile(path.join(home, "fraction"), `score=${(index % 5) / 4}\n`);
  }
  return {
    ids,
    agents: createAgentClient({ connect: agents.connect, keyFor: agents.keyFor }),
    close: () => agents.close(),
  };
}

/** Real sessions on the emulator, created as the BFF creates them, agent delivery included. */
async function emulatorTarget(): Promise<Target> {
  const secret = "bench-agent-key-secret-bench-agent-key-secret";
  const keyFor = (sessionId: string) => agentKey(secret, sessionId);
  const emulator = await startTestEmulator({ guests: "sandbox" });
  try {
    const cluster = createClusterClient(emulator.kubeConfig, {
      namespace: benchNamespace,
      labelSelector: sessionsSelector,
      counter: new KubeRequestCounter(),
    });
    const delivery = createAgentDelivery(await loadAgentFile(), keyFor);
    const ids = sessionIds();
    const started = performance.now();
    console.log(`Launching ${sessionCount} sessions on the emulator (${availableParallelism()} CPUs)...`);
    await Promise.all(
      ids.map((id) => launchSession(cluster, { sessionId: id, lab, owner: id, agentUserData: delivery(id) })),
    );
    await waitUntilRunning(cluster, ids, 120_000);
    console.log(`All ${ids.length} VMs Running after ${ms(performance.now() - started).trim()}.`);
    const agents = createAgentClient({ connect: createPortForwardTransport(cluster.portForward), keyFor });
    // Each agent starts during its guest's boot, after the VM reports Running: measure grading, not
    // start-up.
    for (const id of ids) await untilAgentAnswers(agents, id, started + 180_000);
    console.log(`All agents answer after ${ms(performance.now() - started).trim()}.`);
    return { ids, agents, close: () => emulator.close() };
  } catch (error) {
    await emulator.close();
    throw error;
  }
}

/** Asks the agent's health until it answers: "still starting" is what a booting guest says. */
async function untilAgentAnswers(agents: AgentClient, id: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      await agents.health(id);
      return;
    } catch (error) {
      if (!(error instanceof AgentUnreachableError) || performance.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

async function main(): Promise<void> {
  if (args.through !== "loopback" && args.through !== "emulator") {
    throw new Error(`--through must be loopback or emulator, not ${args.through}`);
  }
  const target = args.through === "emulator" ? await emulatorTarget() : await loopbackTarget();
  const dataRoot = await mkdtemp(path.join(tmpdir(), "bench-grading-"));
  try {
    const sessions = new FixedSessions(
      target.ids.map((id, index) => aSession({ id, owner: `student${index}` })),
    );
    console.log(
      `\nGrading ${sessionCount} sessions, ${lab.checks.length} checks each (each sleeps 0.05 s), through ${args.through}:\n`,
    );
    console.log("concurrency     total   per session p50   per session p99   sessions/s");
    for (const concurrency of concurrencies) {
      const repository = SqliteGradingRepository.open(path.join(dataRoot, `c${concurrency}`));
      const durations: number[] = [];
      const grading = new GradingService({
        repository,
        sessions,
        labs: [lab],
        agents: target.agents,
        concurrency,
        onItemGraded: ({ durationMs }) => durations.push(durationMs),
      });
      try {
        const started = performance.now();
        const run = await grading.startRun(lab.id, "bench");
        await grading.settled(run.id);
        const total = performance.now() - started;
        const finished = await grading.getRun(run.id, {
          username: "bench",
          role: "instructor",
          sections: [],
        });
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
    await target.close();
    await rm(dataRoot, { recursive: true, force: true });
  }
}

await main();
