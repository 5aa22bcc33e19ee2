// bench/vnc.ts's tables: keystroke to pixels each way, and the BFF's CPU and bytes per viewer with
// one viewer against many.
import { fixed, pad } from "./columns.ts";

export interface Sample {
  label: string;
  ms: number[];
}

export interface LoadFigures {
  /** The BFF's CPU milliseconds, and the bytes the average viewer received, over the phase. */
  cpuMs: number;
  bytesPerViewer: number;
  seconds: number;
  /** The area of the rectangles the first viewer was sent, in screens (720x400). */
  screens: number;
}

export interface LoadRound {
  viewers: number;
  /** The same seconds as idle, before the viewers connect: what the BFF spends without them. */
  baseline: LoadFigures;
  /** Opening the viewers' sockets at once until each shows the screen. */
  join: LoadFigures;
  typing: LoadFigures;
  flips: LoadFigures;
  idle: LoadFigures;
}

/** How the run was asked for, as the tables name it. */
export interface VncRun {
  rounds: number;
  keysPerRound: number;
  loadRounds: number;
  manyViewers: number;
  typingKeys: number;
  flipCount: number;
  idleSeconds: number;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const median = (values: number[]) => percentile(values, 50);
export const kib = (bytes: number) => bytes / 1024;
const spread = (values: number[], digits = 1) =>
  `${fixed(Math.min(...values), digits)}-${fixed(Math.max(...values), digits)}`;

export function reportLatency(samples: Sample[], { rounds, keysPerRound }: VncRun): void {
  console.log(
    `\nKeystroke to pixels (ms; ${samples[0]?.ms.length ?? 0} keys each way, ${rounds} alternating rounds)`,
  );
  console.log(
    `  ${"".padEnd(30)}${pad("p50", 8)}${pad("p99", 8)}${pad("min", 8)}${pad("max", 8)}${pad("added p50", 11)}${pad("p99", 8)}`,
  );
  const [direct] = samples;
  for (const { label, ms } of samples) {
    const added =
      direct && label !== direct.label
        ? `${pad(fixed(percentile(ms, 50) - percentile(direct.ms, 50)), 11)}${pad(fixed(percentile(ms, 99) - percentile(direct.ms, 99)), 8)}`
        : "";
    console.log(
      `  ${label.padEnd(30)}${pad(fixed(percentile(ms, 50)), 8)}${pad(fixed(percentile(ms, 99)), 8)}${pad(fixed(Math.min(...ms)), 8)}${pad(fixed(Math.max(...ms)), 8)}${added}`,
    );
  }
  console.log(
    `  over 100 ms: ${samples.map(({ ms }) => ms.filter((value) => value > 100).length).join(" / ")} keys (QEMU's screen refresh slows down while nothing changes)`,
  );
  for (let round = 0; round < rounds && direct; round += 1) {
    const per = samples.map(({ ms }) =>
      fixed(median(ms.slice(round * keysPerRound, (round + 1) * keysPerRound))),
    );
    console.log(`  round ${round + 1} medians: ${per.join(" / ")}`);
  }
}

export function reportLoad(results: LoadRound[], changeLabel: string, run: VncRun): void {
  const { loadRounds, manyViewers, typingKeys, flipCount, idleSeconds } = run;
  const by = (count: number) => results.filter((round) => round.viewers === count);
  const one = by(1);
  const many = by(manyViewers);
  console.log(
    `\nThe BFF's CPU and bytes per viewer (viewers with noVNC's encodings; medians of ${loadRounds} alternating rounds, spread in brackets)`,
  );
  console.log(
    `  ${"".padEnd(34)}${pad("1 viewer", 22)}${pad(`${manyViewers} viewers`, 22)}${pad("ratio", 8)}`,
  );
  // What the BFF spends anyway (its timers, the cluster's watch, the line to the VM kept a while
  // after its last viewer left), at the rate measured before the viewers connected.
  const above = (figures: LoadFigures, round: LoadRound) =>
    figures.cpuMs - (round.baseline.cpuMs / round.baseline.seconds) * figures.seconds;
  const rows: [string, (round: LoadRound) => number, number][] = [
    [`no viewer (baseline): CPU ms/s`, (r) => r.baseline.cpuMs / r.baseline.seconds, 2],
    [`joining: CPU ms, all of them`, (r) => r.join.cpuMs, 1],
    [`joining: KiB to each viewer`, (r) => kib(r.join.bytesPerViewer), 1],
    [`typing: CPU ms a key`, (r) => r.typing.cpuMs / typingKeys, 2],
    [`  above the baseline`, (r) => above(r.typing, r) / typingKeys, 2],
    [`typing: KiB a key, per viewer`, (r) => kib(r.typing.bytesPerViewer) / typingKeys, 2],
    [`${changeLabel}: CPU ms each`, (r) => r.flips.cpuMs / flipCount, 1],
    [`  above the baseline`, (r) => above(r.flips, r) / flipCount, 1],
    [`${changeLabel}: KiB each, per viewer`, (r) => kib(r.flips.bytesPerViewer) / flipCount, 1],
    [`${changeLabel}: screens sent each`, (r) => r.flips.screens / flipCount, 2],
    [`idle (cursor blink): CPU ms/s`, (r) => r.idle.cpuMs / r.idle.seconds, 2],
    [`  above the baseline`, (r) => above(r.idle, r) / r.idle.seconds, 2],
    [`idle: KiB/s per viewer`, (r) => kib(r.idle.bytesPerViewer) / r.idle.seconds, 2],
  ];
  for (const [label, value, digits] of rows) {
    const a = one.map(value);
    const b = many.map(value);
    const cell = (values: number[]) => `${fixed(median(values), digits)} [${spread(values, digits)}]`;
    const ratio = median(b) / median(a);
    console.log(
      `  ${label.padEnd(34)}${pad(cell(a), 22)}${pad(cell(b), 22)}${pad(`${fixed(ratio, 2)}x`, 8)}`,
    );
  }
  for (const [label, part, per] of [
    ["typing", (r: LoadRound) => r.typing, typingKeys],
    [changeLabel, (r: LoadRound) => r.flips, flipCount],
  ] as const) {
    const total = median(many.map((r) => part(r).cpuMs)) / median(one.map((r) => part(r).cpuMs));
    const own = median(many.map((r) => above(part(r), r))) / median(one.map((r) => above(part(r), r)));
    const further =
      (median(many.map((r) => above(part(r), r))) - median(one.map((r) => above(part(r), r)))) /
      (manyViewers - 1) /
      per;
    console.log(
      `  ${manyViewers} viewers against 1, the BFF's CPU for ${label}: ${fixed(total, 2)}x (above the baseline ${fixed(own, 2)}x; ${fixed(further, 2)} ms more each further viewer)   goal < 2x ${total < 2 ? "ok" : "MISSED"}`,
    );
  }
  console.log(
    `  phase lengths: typing ${typingKeys} keys in ${fixed(median(results.map((r) => r.typing.seconds)))} s, ${flipCount} full-screen changes in ${fixed(median(results.map((r) => r.flips.seconds)))} s, idle ${idleSeconds} s`,
  );
}
