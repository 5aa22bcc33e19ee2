// npm run bench:real-guests
//
// What a real guest (Debian under QEMU, emulator/guests/qemu) costs, measured in one run: the image's
// build cold (in a fresh temporary state folder, removed after) and cached, then one session launched
// through the BFF on the QEMU emulator, timed from the launch, and the same session on the sandboxed
// guests (the default, the bare baseline) side by side; last, the real-guest suite as `npm test` runs
// it, for the minutes it adds to CI. Under TCG a boot takes minutes and the machine's cores: about
// 12 minutes in all.
// The cached image and the QEMU guests' files live in .lab/real-guests/, the folder
// `npm run test:real-guests` uses, so neither rebuilds the other's image.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { SelfCheck } from "../src/common/grading-api.ts";
import { ensureGuestImage } from "../src/emulator/guests/qemu/image.ts";
import { residentMiB } from "../src/common/resident-memory.ts";
import { qemuPidOf, untilQemuGone } from "../src/emulator/guests/qemu/testing/qemu-process.ts";
import { bootMs, realGuestsStateDir, realGuestVm } from "../src/emulator/guests/qemu/testing/real-guests.ts";
import { startTestEmulator } from "../src/emulator/testing/start.ts";
import { ConsoleTestClient, signInCookie } from "../src/server/console/testing/console-client.ts";
import { aCheck, aGradingLab } from "../src/server/grading/testing/grading-fixtures.ts";
import { startTestBff } from "../src/server/testing/test-bff.ts";
import { projectRoot } from "./support/bench-cluster.ts";

// A real guest's boot log has systemd's status lines cut through their colour sequences
// (docs/emulator.md, "Real guests"): the console client's xterm.js logs each one as a "Parsing error"
// with its whole parser state, dozens of lines per boot, while the text itself shows. Counted, not printed.
let xtermParsingErrors = 0;
const printError = console.error.bind(console);
console.error = (...args: unknown[]) => {
  if (typeof args[0] === "string" && args[0].startsWith("xterm.js: Parsing error")) xtermParsingErrors += 1;
  else printError(...args);
};

/** The lab of the real-guest suite: 2 vCPUs, 1 GiB, one self-check. */
const lab = aGradingLab(
  [aCheck({ id: "hello-file", title: "Create ~/hello.txt", selfCheck: true, run: "test -f ~/hello.txt" })],
  {
    vm: realGuestVm,
    session: { minutes: 60, extendMinutes: 15, maxExtensions: 2, terminals: 1, consoles: ["serial"] },
  },
);

interface SessionTimes {
  /** Milliseconds from the launch's POST; undefined where the guest shows no such thing. */
  running: number;
  login?: number;
  agentReady: number;
  prompt: number;
  rssMiB?: number;
}

async function main(): Promise<void> {
  console.log("Real guests: Debian under QEMU (emulator/guests/qemu) against the sandboxed guests");
  console.log(`  ${hostLine()}`);

  const scratch = await mkdtemp(path.join(tmpdir(), "lab-bench-real-guests-"));
  let coldMs: number;
  try {
    const started = performance.now();
    await ensureGuestImage(scratch);
    coldMs = performance.now() - started;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const cachedStarted = performance.now();
  await ensureGuestImage(realGuestsStateDir, (line) => console.log(`  ${line}`));
  const cachedMs = performance.now() - cachedStarted;
  console.log(
    `  image build: cold ${seconds(coldMs)} s (fresh state folder, removed after), cached ${seconds(cachedMs)} s`,
  );

  const qemu = await oneSession("qemu");
  const sandbox = await oneSession("sandbox");

  console.log("\n  one session launched through the BFF, from the launch's POST:");
  console.log(
    `  ${"".padEnd(40)} ${"QEMU (TCG)".padStart(12)} ${"sandbox".padStart(10)} ${"ratio".padStart(7)}`,
  );
  const row = (what: string, real?: number, bare?: number) =>
    console.log(
      `  ${what.padEnd(40)} ${(real === undefined ? "-" : `${seconds(real)} s`).padStart(12)} ` +
        `${(bare === undefined ? "-" : `${seconds(bare)} s`).padStart(10)} ` +
        `${(real === undefined || bare === undefined ? "" : `${(real / Math.max(bare, 1)).toFixed(0)}x`).padStart(7)}`,
    );
  row("session running", qemu.running, sandbox.running);
  row("first `login:` on the console", qemu.login, sandbox.login);
  row("agent ready (first gradable self-check)", qemu.agentReady, sandbox.agentReady);
  row("autologin shell's prompt", qemu.prompt, sandbox.prompt);
  console.log(
    `  QEMU resident memory, booted: ${qemu.rssMiB ?? "?"} MiB (guest memory 1 GiB); the sandbox has no login: prompt`,
  );
  console.log(
    `  xterm.js parsing errors on the consoles (systemd's cut colour sequences): ${xtermParsingErrors}`,
  );

  // What `npm test` (and so CI) spends on real guests: the suite as CI runs it, after the image's
  // cold build, which a fresh clone pays once. The Debian packages' install is the CI machine's own.
  console.log("\n  the real-guest suite, as `npm test` runs it last (CI's goal: at most 10 minutes):");
  const suiteStarted = performance.now();
  const suite = spawnSync("npm", ["run", "--silent", "test:real-guests"], {
    cwd: projectRoot,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const suiteMs = performance.now() - suiteStarted;
  const tests = /Tests\s+(\d+ passed[^\n]*)/.exec(suite.stdout)?.[1];
  console.log(
    `  suite: ${minutes(suiteMs)} min, ${suite.status === 0 ? tests : `FAILED (exit ${suite.status})`}`,
  );
  console.log(
    `  added to CI from a fresh clone: ${minutes(coldMs + suiteMs)} min (cold image ${seconds(coldMs)} s + suite)`,
  );
}

function minutes(ms: number): string {
  return (ms / 60_000).toFixed(1);
}

/** One session on an emulator with these guests, launched and timed through the BFF as a student. */
async function oneSession(guests: "qemu" | "sandbox"): Promise<SessionTimes> {
  const emulator = await startTestEmulator({
    guests,
    deployRbac: true,
    ...(guests === "qemu" ? { stateDir: realGuestsStateDir } : {}),
  });
  const bff = await startTestBff({ labs: [lab], emulator, gradingLimits: { selfCheckIntervalMs: 1 } });
  let serial: ConsoleTestClient | undefined;
  try {
    const alice = await bff.signIn("alice");
    const cookie = await signInCookie(bff.url, "alice");
    const launched = performance.now();
    const since = () => performance.now() - launched;
    const created = await alice.post("/api/sessions", { labId: lab.id });
    if (created.status !== 201) throw new Error(`launch: ${created.status} ${JSON.stringify(created.body)}`);
    const sessionId: string = created.body.id;
    const times: Partial<SessionTimes> = {};

    // Self-checks once a second, as an impatient student: the first gradable one is "agent ready".
    const agentReady = (async () => {
      for (;;) {
        if (since() > bootMs) throw new Error(`${guests}: the agent never answered`);
        const answer = await alice.post(`/api/sessions/${sessionId}/checks`);
        if (answer.status === 201 && SelfCheck.parse(answer.body).result.gradable) return since();
        await sleep(1000);
      }
    })();
    for (;;) {
      const answer = await alice.get(`/api/sessions/${sessionId}`);
      if (answer.body?.status === "running") break;
      if (since() > bootMs) throw new Error(`${guests}: the session never ran`);
      await sleep(100);
    }
    times.running = since();
    serial = await ConsoleTestClient.connect(bff.url, sessionId, { cookie });
    await serial.untilLive(bootMs);
    // A sandboxed guest shows no login: prompt, its shell starts when cloud-init is done.
    const login =
      guests === "qemu"
        ? serial
            .untilScreenShows("login:", bootMs)
            .then(() => (times.login = since()))
            .catch(() => undefined)
        : undefined;
    await serial.untilScreenShows(`student@${sessionId}:~$`, bootMs);
    times.prompt = since();
    await login;
    times.agentReady = await agentReady;
    if (guests === "qemu") {
      const pid = qemuPidOf(sessionId);
      times.rssMiB = pid === undefined ? undefined : residentMiB(pid);
    }
    const ended = await alice.delete(`/api/sessions/${sessionId}`);
    if (ended.status >= 300) throw new Error(`ending the session: ${ended.status}`);
    // The QEMU guest powers off on the ACPI button within seconds; wait for it, so nothing is left.
    await untilQemuGone(sessionId, 60_000);
    return times as SessionTimes;
  } finally {
    serial?.close();
    await bff.close();
    await emulator.close();
  }
}

function hostLine(): string {
  const cores = readFileSync("/proc/cpuinfo", "utf8").match(/^processor\s*:/gm)?.length ?? "?";
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  return `${cores} cores, load average ${load}; TCG unless /dev/kvm is usable`;
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);
}

await main();
