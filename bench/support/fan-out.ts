// What more viewers of one console cost the BFF (bench/console.ts): the owner's socket plus staff
// observing (?mode=observe), all acking as the SPA does, against the owner alone. Every round runs one
// viewer, then all of them, on the same console; round 0 is JIT warm-up and is left out. The owner's
// socket stays open throughout; the observers join before their run and leave after it.
//
// The observers are different people. One person may hold at most `socketsPerPerson` (8) sockets on
// one console, so nine windows of the TA tara would be refused: the bench's BFF gets a users file with
// the demo users and more TAs of the whole course. Their clients run in processes of their own, a few
// each (console-observers.ts), as browsers would on machines of their own.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { hashPassword } from "../../src/server/auth/passwords.ts";
import { demoPassword, demoUsers } from "../../src/server/auth/users-file.ts";
import type { ObserverRun, ObserversMessage } from "../console-observers.ts";
import { forkBenchProcess } from "./bff-process.ts";
import { openRelay, timedRun, viewersDownTo, type ConsoleBff, type Run } from "./console-lines.ts";
import { cpuMsOf } from "./cpu-ipc.ts";
import { formatSpread, mb, pairedRatio, spread } from "./spread.ts";
import { pad } from "./columns.ts";

/** tara, then ta-2, ta-3, ...: one name a staff observer. */
export function staffNames(count: number): string[] {
  return Array.from({ length: count }, (_, index) => (index === 0 ? "tara" : `ta-${index + 1}`));
}

/** The BFF's users file (DATA_DIR/users.json): the demo users and these TAs, password "demo". */
export async function writeUsersWithStaff(dataDir: string, staff: readonly string[]): Promise<void> {
  const demoNames = new Set(demoUsers.map((user) => user.username));
  const users = [
    ...demoUsers,
    ...staff
      .filter((name) => !demoNames.has(name))
      .map((username) => ({ username, role: "ta", sections: [] })),
  ];
  const hash = await hashPassword(demoPassword);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeFile(
    path.join(dataDir, "users.json"),
    JSON.stringify({ users: users.map((user) => ({ ...user, passwordHash: hash })) }, null, 2) + "\n",
    { mode: 0o600 },
  );
}

export interface FanOutSetup {
  bff: ConsoleBff;
  ownerCookie: string;
  /** One sign-in a staff observer. */
  observerCookies: string[];
  sessionId: string;
  command: string;
  rounds: number;
  onRound(): void;
}

interface OwnerRun extends Run {
  catchUps: number;
}

export interface FanOutRound {
  alone: OwnerRun;
  watched: OwnerRun;
  observers: ObserverRun[];
  /** The observers' processes over the run: their longest event-loop stall, and their CPU together. */
  observerProcesses: { stalledMs: number; cpuMs: number };
}

/**
 * Observers a process. WARNING: nine in one process were dropped now and then on a loaded 2-core
 * machine (all nine at once in 3 of 4 tries of 4 to 6 rounds, load average 8 to 11): while that one
 * event loop waited for a core, each of them fell 4 MiB behind together. In three processes of three,
 * none was dropped in 3 tries under the same load (about 2 ms of CPU per MB received, against 1).
 */
const observersPerProcess = 3;

export async function measureFanOut(setup: FanOutSetup): Promise<FanOutRound[]> {
  const { bff, sessionId, command } = setup;
  const groups: string[][] = [];
  for (let start = 0; start < setup.observerCookies.length; start += observersPerProcess) {
    groups.push(setup.observerCookies.slice(start, start + observersPerProcess));
  }
  const processes = await Promise.all(
    groups.map((cookies) =>
      forkBenchProcess<ObserversMessage>("console-observers.ts", {
        env: { OBSERVE_URL: bff.url, OBSERVE_SESSION: sessionId, OBSERVE_COOKIES: JSON.stringify(cookies) },
      }),
    ),
  );
  try {
    const owner = await openRelay(bff.url, setup.ownerCookie, sessionId, { patient: true });
    const ownerRun = async (): Promise<OwnerRun> => {
      const before = owner.catchUps();
      const run = await timedRun(owner.line, command, () => cpuMsOf(bff));
      return { ...run, catchUps: owner.catchUps() - before };
    };
    const measured: FanOutRound[] = [];
    for (let round = 0; round <= setup.rounds; round += 1) {
      const alone = await ownerRun();
      await Promise.all(processes.map((observers) => observers.ask("open", "opened")));
      const watched = await ownerRun();
      const closed = await Promise.all(processes.map((observers) => observers.ask("close", "closed")));
      await viewersDownTo(bff, 1);
      if (round > 0) {
        measured.push({
          alone,
          watched,
          observers: closed.flatMap((answer) => answer.observers),
          observerProcesses: {
            stalledMs: Math.max(...closed.map((answer) => answer.stalledMs)),
            cpuMs: closed.reduce((sum, answer) => sum + answer.cpuMs, 0),
          },
        });
      }
      setup.onRound();
    }
    await owner.line.close();
    await viewersDownTo(bff, 0);
    return measured;
  } finally {
    await Promise.all(processes.map((observers) => observers.stop()));
  }
}

const cpuPerMb = (run: Run) => run.cpuMs / mb(run.bytes);

export function reportFanOut(rounds: readonly FanOutRound[], viewers: number, megabytes: number): void {
  const staff = viewers - 1;
  console.log(
    `\nFan-out: ${viewers} viewers of one console (the owner and ${staff} staff observing) against the owner` +
      `\nalone; ${megabytes} MB of text a run, ${rounds.length} rounds after a warm-up one, each one viewer then ${viewers}.` +
      "\nThe BFF's CPU per MB of guest output (what the owner received); median [min..max].",
  );
  console.log(`  ${"".padEnd(14)}${pad("CPU ms/MB", 20)}${pad("MB/s", 20)}`);
  for (const [label, runs] of [
    ["1 viewer", rounds.map((round) => round.alone)],
    [`${viewers} viewers`, rounds.map((round) => round.watched)],
  ] as const) {
    const rate = formatSpread(spread(runs.map((run) => mb(run.bytes) / run.seconds)));
    console.log(`  ${label.padEnd(14)}${pad(formatSpread(spread(runs.map(cpuPerMb))), 20)}${pad(rate, 20)}`);
  }
  const ratio = pairedRatio(
    rounds.map((round) => cpuPerMb(round.watched)),
    rounds.map((round) => cpuPerMb(round.alone)),
  );
  const verdict = viewers === 10 ? `   goal <= 2x ${ratio.median <= 2 ? "ok" : "MISSED"}` : "";
  console.log(`  ${viewers} viewers / 1, paired by round: ${formatSpread(ratio, 2, "x")}${verdict}`);

  const observerRuns = rounds.flatMap((round) => round.observers);
  const ownerCatchUps = rounds.reduce((sum, round) => sum + round.alone.catchUps + round.watched.catchUps, 0);
  const dropped = observerRuns.filter((run) => run.dropped).length;
  const caughtUp = observerRuns.filter((run) => run.catchUps > 0).length;
  const received = formatSpread(spread(observerRuns.map((run) => mb(run.bytes))));
  const names = staffNames(staff);
  const who = names.length > 3 ? `${names[0]}, ${names[1]} … ${names.at(-1)}` : names.join(", ");
  const stalledMs = Math.max(...rounds.map((round) => round.observerProcesses.stalledMs));
  const observerCpu = spread(
    rounds.map(
      (round) =>
        round.observerProcesses.cpuMs /
        mb(round.observers.reduce((sum, observer) => sum + observer.bytes, 0)),
    ),
  );
  console.log(
    `  caught up by replay: the owner ${ownerCatchUps} times; of ${observerRuns.length} observer runs, ${dropped} dropped` +
      ` and ${caughtUp} caught up;\n  each observer received ${received} MB a run` +
      `\n  (the observers are ${who}, one person each: one may hold at most 8 sockets on a console.` +
      `\n  Their clients run in processes of their own, ${observersPerProcess} each: ${formatSpread(observerCpu, 1)} ms` +
      `\n  of CPU per MB received, event loops delayed ${stalledMs.toFixed(0)} ms at most)`,
  );
}
