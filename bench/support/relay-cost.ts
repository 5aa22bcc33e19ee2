// What the console relay costs against its floor (bench/console.ts). For each producer, every round
// runs the variants one after another in a fixed order: direct to the emulator, via the BFF, via the
// bare pipe (bare-pipe.ts), then a lab terminal via the BFF. Round 0 is JIT warm-up and is left out.
// A VMI has one console connection and a new one takes it from the old, as in KubeVirt, so each
// variant lets go of the VM's console before the next one connects.
import type { KubeConfig } from "@kubernetes/client-node";
import type { BarePipeMessage } from "../bare-pipe.ts";
import type { BffProcess } from "./bff-process.ts";
import {
  openBare,
  openDirect,
  openRelay,
  timedRun,
  viewersDownTo,
  type ConsoleBff,
  type Line,
  type Run,
} from "./console-lines.ts";
import { cpuMsOf } from "./cpu-ipc.ts";
import { formatSpread, mb, pairedRatio, spread } from "./spread.ts";
import { pad } from "./columns.ts";

export type BarePipe = BffProcess<BarePipeMessage>;

export interface Producer {
  label: string;
  /** A shell command whose output is the load. */
  command: string;
  /** The most the BFF's CPU per MB may be, as a multiple of the bare pipe's. */
  goalVsBare?: number;
}

const variantKeys = ["direct", "bff", "bare", "terminal"] as const;
type VariantKey = (typeof variantKeys)[number];

const variantLabels: Record<VariantKey, string> = {
  direct: "direct to the emulator",
  bff: "via the BFF",
  bare: "via the bare pipe",
  terminal: "a lab terminal via the BFF",
};

export interface VariantRun extends Run {
  /** Screens replayed by the BFF after the first: output it skipped because the client fell behind. */
  catchUps: number;
}

export interface ProducerCost {
  producer: Producer;
  /** The measured rounds (the warm-up left out), each with one run of every variant. */
  rounds: Record<VariantKey, VariantRun>[];
}

export interface RelayCostSetup {
  kubeConfig: KubeConfig;
  bff: ConsoleBff;
  bare: BarePipe;
  /** The session owner's sign-in, and their session (with the grading agent, for the terminal). */
  cookie: string;
  sessionId: string;
  /** Measured rounds, after the warm-up one. */
  rounds: number;
  onRound(): void;
}

interface Connected {
  line: Line;
  catchUps(): number;
  /** Closes the client and waits until the relay let go of its line to the VM. */
  close(): Promise<void>;
}

interface Variant {
  key: VariantKey;
  open(): Promise<Connected>;
  /** The relay process's CPU ms so far; none for the direct line. */
  cpuMs?: () => Promise<number>;
}

function variantsOf({ kubeConfig, bff, bare, cookie, sessionId }: RelayCostSetup): Variant[] {
  const viaBff = (key: VariantKey, terminal?: number): Variant => ({
    key,
    cpuMs: () => cpuMsOf(bff),
    async open() {
      const relay = await openRelay(bff.url, cookie, sessionId, { terminal, patient: true });
      return {
        line: relay.line,
        catchUps: relay.catchUps,
        // The BFF's own line to the VM lingers with no viewer; the bare pipe's connection takes the
        // console from it, and the BFF then closes it.
        close: async () => {
          await relay.line.close();
          await viewersDownTo(bff, 0);
        },
      };
    },
  });
  return [
    {
      key: "direct",
      async open() {
        const line = await openDirect(kubeConfig, sessionId);
        return { line, catchUps: () => 0, close: () => line.close() };
      },
    },
    viaBff("bff"),
    {
      key: "bare",
      cpuMs: () => cpuMsOf(bare),
      async open() {
        const line = await openBare(bare.url, sessionId);
        return {
          line,
          catchUps: () => 0,
          // Else the next variant's connection would cut a line still draining into this process.
          close: async () => {
            await line.close();
            while ((await bare.ask("upstreams", "upstreams")).open > 0) {
              await new Promise((resolve) => setTimeout(resolve, 10));
            }
          },
        };
      },
    },
    viaBff("terminal", 1),
  ];
}

export async function measureRelayCost(
  setup: RelayCostSetup,
  producers: readonly Producer[],
): Promise<ProducerCost[]> {
  const variants = variantsOf(setup);
  const results: ProducerCost[] = [];
  for (const producer of producers) {
    const rounds: Record<VariantKey, VariantRun>[] = [];
    for (let round = 0; round <= setup.rounds; round += 1) {
      const runs: Partial<Record<VariantKey, VariantRun>> = {};
      for (const variant of variants) {
        const connected = await variant.open();
        const run = await timedRun(connected.line, producer.command, variant.cpuMs);
        runs[variant.key] = { ...run, catchUps: connected.catchUps() };
        await connected.close();
      }
      if (round > 0) rounds.push(runs as Record<VariantKey, VariantRun>);
      setup.onRound();
    }
    results.push({ producer, rounds });
  }
  return results;
}

const cpuPerMb = (run: Run) => run.cpuMs / mb(run.bytes);

export function reportRelayCost(results: readonly ProducerCost[], megabytes: number): void {
  const rounds = results[0]?.rounds.length ?? 0;
  console.log(
    `\nRelay cost: ${megabytes} MB printed by the guest a run; ${rounds} rounds after a warm-up one, each running,` +
      `\nin this order: ${variantKeys.map((key) => variantLabels[key]).join(", ")}.` +
      "\nCPU: the relay process's own (user + system) per MB its client received. MB/s: information" +
      "\nonly (on a small machine the cores, not the relay, set it). MB: received in a run. Caught up:" +
      "\nscreens the BFF replayed to a client that fell behind, all rounds together. Median [min..max].",
  );
  console.log(
    `  ${"".padEnd(28)}${pad("CPU ms/MB", 20)}${pad("MB/s", 20)}${pad("MB", 8)}${pad("caught up", 11)}`,
  );
  for (const { producer, rounds: measured } of results) {
    console.log(`  ${producer.label}`);
    const runsOf = (key: VariantKey) => measured.map((round) => round[key]);
    for (const key of variantKeys) {
      const runs = runsOf(key);
      const relayed = key !== "direct";
      const cpu = relayed ? formatSpread(spread(runs.map(cpuPerMb))) : "–";
      const rate = formatSpread(spread(runs.map((run) => mb(run.bytes) / run.seconds)));
      const received = spread(runs.map((run) => mb(run.bytes))).median.toFixed(1);
      const viaBff = key === "bff" || key === "terminal";
      const caughtUp = viaBff ? String(runs.reduce((sum, run) => sum + run.catchUps, 0)) : "–";
      console.log(
        `    ${variantLabels[key].padEnd(26)}${pad(cpu, 20)}${pad(rate, 20)}${pad(received, 8)}${pad(caughtUp, 11)}`,
      );
    }
    const bare = runsOf("bare").map(cpuPerMb);
    const vsBare = pairedRatio(runsOf("bff").map(cpuPerMb), bare);
    const goal = producer.goalVsBare;
    const verdict =
      goal === undefined ? "" : `   goal <= ${goal}x ${vsBare.median <= goal ? "ok" : "MISSED"}`;
    console.log(`    BFF / bare pipe, CPU per MB paired by round: ${formatSpread(vsBare, 2, "x")}${verdict}`);
    console.log(
      `    lab terminal via the BFF / bare pipe: ${formatSpread(pairedRatio(runsOf("terminal").map(cpuPerMb), bare), 2, "x")}` +
        "\n      (no bare pipe speaks the agent's protocol: this is the same round's bare serial-console pipe," +
        "\n      on the same bytes)",
    );
  }
}
