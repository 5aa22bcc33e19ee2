// What the screen hub costs (docs/vnc.md, src/server/screen/), side by side in one run, on a real
// guest: Debian under QEMU (as bench/real-guests.ts and `--guests qemu` boot it), its tty1 the
// student's shell (a graphical lab's user data logs them in there), which echoes what is typed.
//  - keystroke to pixels, p50/p99: a key sent, until the viewer's framebuffer shows the glyph in the
//    cursor's cell (or the cell blank again after BackSpace). Straight on QEMU's VNC socket, and
//    through the BFF (browser -> BFF's hub -> the emulator's vnc subresource -> QEMU's socket), with
//    the same RFB client (src/server/screen/rfb-client.ts) both ways, and through the BFF with
//    noVNC's encodings (TightPNG, what a browser gets), the three alternating, all connected throughout;
//  - the BFF's CPU (its own process, process.cpuUsage) and the bytes each viewer receives, for typing
//    and for a change of the whole screen (tty1 in reverse video and back, written to /dev/tty1 from
//    the serial console), and idle (the text cursor's blink), with 1 viewer and with 10, alternating,
//    each beside the same BFF's CPU with no viewer (its timers, the cluster, the garbage collector);
//    the goal is that 10 viewers cost the BFF less than twice what 1 does.
// Without QEMU (or its image) it says so and measures the sandboxed guest's screen instead, labelled.
//
//   npm run bench:vnc [-- --rounds 4 --keys 30 --load-rounds 3 --viewers 10 --typing-keys 20 --flips 8]
//   npm run bench:vnc -- --guests sandbox     (the sandboxed guest, quick)
//   npm run bench:vnc -- --profile DIR        (the BFF writes a CPU profile into DIR when it stops)
//
// The BFF runs as a process of its own (bench/console-bff.ts); the emulator, which relays QEMU's
// socket to the BFF as KubeVirt's virt-handler does, runs in this process beside the viewers. The
// viewers are support/vnc-probes.ts's, the guest support/vnc-guest.ts's, the tables
// support/vnc-report.ts's.
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { untilQemuGone } from "../src/emulator/guests/qemu/testing/qemu-process.ts";
import { bootMs, realGuestsStateDir } from "../src/emulator/guests/qemu/testing/real-guests.ts";
import { startTestEmulator } from "../src/emulator/testing/start.ts";
import { screenText } from "../src/emulator/testing/screen-text.ts";
import type { BffMessage } from "./console-bff.ts";
import { api, signIn, type Person } from "./support/browser-api.ts";
import { forkBff, type BffProcess } from "./support/bff-process.ts";
import { chooseGuests, qemuVncSocket, sandboxVncSocket, serialLine } from "./support/vnc-guest.ts";
import {
  bffRfbProbe,
  cellShows,
  cursorCell,
  directProbe,
  keysyms,
  novncProbe,
  reversed,
  until,
  type Cell,
  type Probe,
} from "./support/vnc-probes.ts";
import { fixed } from "./support/columns.ts";
import {
  reportLatency,
  reportLoad,
  type LoadFigures,
  type LoadRound,
  type Sample,
  type VncRun,
} from "./support/vnc-report.ts";

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "4" },
    keys: { type: "string", default: "30" },
    "load-rounds": { type: "string", default: "3" },
    viewers: { type: "string", default: "10" },
    "typing-keys": { type: "string", default: "20" },
    flips: { type: "string", default: "8" },
    "idle-seconds": { type: "string", default: "3" },
    guests: { type: "string", default: "qemu" },
    profile: { type: "string" },
    help: { type: "boolean", default: false },
  },
});
if (args.help) {
  console.log(
    "npm run bench:vnc [-- --rounds 4 --keys 30 --load-rounds 3 --viewers 10 --typing-keys 20 --flips 8 --idle-seconds 3 --guests qemu|sandbox --profile DIR]",
  );
  process.exit(0);
}
const rounds = Number(args.rounds);
const keysPerRound = Number(args.keys);
const loadRounds = Number(args["load-rounds"]);
const manyViewers = Number(args.viewers);
const typingKeys = Number(args["typing-keys"]);
const flipCount = Number(args.flips) + (Number(args.flips) % 2); // even: the screen ends as it began
const idleSeconds = Number(args["idle-seconds"]);
const run: VncRun = { rounds, keysPerRound, loadRounds, manyViewers, typingKeys, flipCount, idleSeconds };

/** A keystroke is given this long in the load phases (about a fast typist's pace). */
const keySlotMs = 150;
/** A change of the whole screen is given this long, so its last updates land in its phase. */
const flipSlotMs = 700;

// The lab: a graphical console, and the student in group tty, so that the serial console's shell
// may write to /dev/tty1 (getty leaves it root:tty 0620) to turn the whole screen around.
const labYaml = `id: screen-bench
title: Screen bench
description: The screen hub's bench.
vm:
  cpu: 2
  memory: 1Gi
  image: quay.io/containerdisks/debian:12
  cloudInit: |
    #cloud-config
    runcmd:
      - usermod -aG tty student
session:
  minutes: 60
  consoles: [serial, graphical]
checks:
  - id: nothing
    title: Nothing
    run: "true"
`;

// Measurements

/** Keys typed on `probe` one at a time ("x", then BackSpace), each timed until its own framebuffer shows it. */
async function keyLatencies(probe: Probe, cell: Cell, count: number): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const letter = index % 2 === 0;
    // A random pause: keys do not arrive in step with QEMU's screen refresh (every 30 ms at best).
    await sleep(Math.random() * 40);
    const started = performance.now();
    const shown = until(
      probe,
      () => cellShows(probe.framebuffer(), cell, letter ? "x" : " "),
      `key ${index}`,
    );
    probe.key(letter ? keysyms.x : keysyms.backSpace);
    await shown;
    samples.push(performance.now() - started);
  }
  return samples;
}

type Bff = BffProcess<BffMessage>;

async function phase(bff: Bff, viewers: Probe[], work: () => Promise<void>): Promise<LoadFigures> {
  const before = viewers.map((viewer) => viewer.bytes());
  let area = 0;
  const stop = viewers[0]?.onUpdate((rects) => {
    for (const rect of rects) area += rect.width * rect.height;
  });
  const cpuBefore = (await bff.ask("cpu", "cpu")).ms;
  const started = performance.now();
  await work();
  const cpuMs = (await bff.ask("cpu", "cpu")).ms - cpuBefore;
  stop?.();
  const received = viewers.map((viewer, index) => viewer.bytes() - before[index]!);
  return {
    cpuMs,
    bytesPerViewer: viewers.length === 0 ? 0 : received.reduce((a, b) => a + b, 0) / viewers.length,
    seconds: (performance.now() - started) / 1000,
    screens: area / (720 * 400),
  };
}

async function paced(slotMs: number, work: () => Promise<void>): Promise<void> {
  const started = performance.now();
  await work();
  await sleep(Math.max(0, slotMs - (performance.now() - started)));
}

/** Resolves once the BFF has let go of every viewer. */
async function noViewers(bff: Bff): Promise<void> {
  while ((await bff.ask("stats", "stats")).consoles.viewers !== 0) await sleep(50);
}

/**
 * Who watches: the owner (who types) and staff in observe mode, in turn; the BFF lets one person
 * open 8 sockets (socketsPerPerson), so 10 viewers are three people's windows.
 */
interface Watchers {
  owner: string;
  staff: string[];
}

async function loadRound(
  bff: Bff,
  sessionId: string,
  watchers: Watchers,
  count: number,
  fullScreenChange: (viewers: Probe[], index: number) => Promise<void>,
): Promise<LoadRound> {
  const people = [watchers.owner, ...watchers.staff];
  const baseline = await phase(bff, [], () => sleep(idleSeconds * 1000));
  // Joining: the sockets opened at once, until every viewer shows the screen (its first update).
  const viewers: Probe[] = [];
  const joinCpuBefore = (await bff.ask("cpu", "cpu")).ms;
  const joinStarted = performance.now();
  try {
    viewers.push(
      ...(await Promise.all(
        Array.from({ length: count }, (_, index) =>
          novncProbe(
            bff.url,
            sessionId,
            people[index % people.length]!,
            index % people.length === 0 ? undefined : "observe",
          ),
        ),
      )),
    );
    for (const viewer of viewers) {
      await until(
        viewer,
        () => screenText(viewer.framebuffer()).some((row) => row.includes(":~$")),
        "the shell prompt",
        30_000,
      );
    }
    const join: LoadFigures = {
      cpuMs: (await bff.ask("cpu", "cpu")).ms - joinCpuBefore,
      bytesPerViewer: viewers.reduce((sum, viewer) => sum + viewer.bytes(), 0) / viewers.length,
      seconds: (performance.now() - joinStarted) / 1000,
      screens: 1,
    };
    await sleep(1000);
    const [typist] = viewers;
    const cell = await cursorCell(typist!, viewers);
    const typing = await phase(bff, viewers, async () => {
      for (let index = 0; index < typingKeys; index += 1) {
        const character = index % 2 === 0 ? "x" : " ";
        await paced(keySlotMs, async () => {
          typist!.key(index % 2 === 0 ? keysyms.x : keysyms.backSpace);
          for (const viewer of viewers)
            await until(viewer, () => cellShows(viewer.framebuffer(), cell, character), "the key");
        });
      }
    });
    const flips = await phase(bff, viewers, async () => {
      for (let index = 0; index < flipCount; index += 1) {
        await paced(flipSlotMs, () => fullScreenChange(viewers, index));
      }
    });
    const idle = await phase(bff, viewers, () => sleep(idleSeconds * 1000));
    return { viewers: count, baseline, join, typing, flips, idle };
  } finally {
    for (const viewer of viewers) viewer.close();
    await noViewers(bff);
  }
}

// The run

async function main(): Promise<void> {
  const started = performance.now();
  console.log("The screen (VNC): straight on the guest's VNC socket against through the BFF's screen hub");
  console.log(`  ${hostLine()}`);
  const { guests, label } = await chooseGuests(args.guests);
  console.log(`  guest: ${label}`);

  const emulator = await startTestEmulator({
    guests,
    deployRbac: true,
    ...(guests === "qemu" ? { stateDir: realGuestsStateDir } : {}),
  });
  const scratch = await mkdtemp(path.join(tmpdir(), "lab-bench-vnc-"));
  const labsDir = path.join(scratch, "labs");
  await mkdir(labsDir);
  await writeFile(path.join(labsDir, "screen-bench.yaml"), labYaml);
  const bff = await forkBff<BffMessage>("console-bff.ts", {
    kubeconfigPath: emulator.bffKubeconfigPath(),
    env: {
      DATA_DIR: path.join(scratch, "bff"),
      LABS_DIR: labsDir,
      AGENT_TOKEN_SECRET: "bench-vnc-agent-secret-bench-vnc-agent-secret",
    },
    execArgv: args.profile ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(args.profile)}`] : [],
  });
  let sessionId: string | undefined;
  let alice: Person | undefined;
  const probes: Probe[] = [];
  try {
    alice = await signIn(bff.url, "alice", "demo");
    const launched = performance.now();
    const created = await api(bff.url, alice, "POST", "/api/sessions", { labId: "screen-bench" });
    if (created.status !== 201) throw new Error(`launch: ${created.status} ${created.text}`);
    sessionId = (JSON.parse(created.text) as { id: string }).id;
    for (;;) {
      const answer = await api(bff.url, alice, "GET", `/api/sessions/${sessionId}`);
      if ((JSON.parse(answer.text) as { status?: string }).status === "running") break;
      if (performance.now() - launched > bootMs) throw new Error("the session never ran");
      await sleep(200);
    }

    // The BFF's viewer first: it opens the hub's line (and, on a sandboxed guest, its screen server).
    const viaRfb = await bffRfbProbe(bff.url, sessionId, alice.cookie);
    probes.push(viaRfb);
    await until(
      viaRfb,
      () => screenText(viaRfb.framebuffer()).some((row) => row.includes(":~$")),
      "tty1's shell prompt",
      bootMs,
    );
    const promptSeconds = (performance.now() - launched) / 1000;
    const socketPath = guests === "qemu" ? qemuVncSocket(sessionId) : sandboxVncSocket(emulator.dir);
    const direct = await directProbe(socketPath);
    probes.unshift(direct);
    const viaNovnc = await novncProbe(bff.url, sessionId, alice.cookie);
    probes.push(viaNovnc);
    for (const probe of [direct, viaNovnc]) {
      await until(
        probe,
        () => screenText(probe.framebuffer()).some((row) => row.includes(":~$")),
        "tty1's shell prompt",
        30_000,
      );
    }
    console.log(`  tty1's shell prompt on the screen ${fixed(promptSeconds)} s after the launch`);

    // Keystroke to pixels, the three ways in turn, every one connected throughout.
    const cell = await cursorCell(direct, probes);
    const samples: Sample[] = probes.map((probe) => ({ label: probe.label, ms: [] }));
    for (let round = 0; round < rounds; round += 1) {
      for (let turn = 0; turn < probes.length; turn += 1) {
        const which = (round + turn) % probes.length;
        const probe = probes[which]!;
        // Two warm-up keys each turn, not counted.
        await keyLatencies(probe, cell, 2);
        samples[which]!.ms.push(...(await keyLatencies(probe, cell, keysPerRound)));
      }
      process.stdout.write(".");
    }
    process.stdout.write("\n");
    for (const probe of probes.splice(0)) probe.close();
    await noViewers(bff);

    // A change of the whole screen: on QEMU, tty1 in reverse video and back (DECSCNM, which the
    // kernel's VGA console applies to every cell), written from the serial console; on the
    // sandboxed guest, Return at a full screen of prompts scrolls all of it.
    let changeLabel: string;
    let fullScreenChange: (viewers: Probe[], index: number) => Promise<void>;
    let serial: Awaited<ReturnType<typeof serialLine>> | undefined;
    if (guests === "qemu") {
      serial = await serialLine(emulator, sessionId);
      await serial.untilPrompt(bootMs);
      console.log(
        `  the serial console's shell ${fixed((performance.now() - launched) / 1000)} s after the launch`,
      );
      changeLabel = "reverse video";
      fullScreenChange = async (viewers, index) => {
        const on = index % 2 === 0;
        serial!.send(`printf '\\033[?5${on ? "h" : "l"}' > /dev/tty1\r`);
        for (const viewer of viewers)
          await until(viewer, () => reversed(viewer.framebuffer()) === on, "the whole screen changed");
      };
    } else {
      changeLabel = "scroll";
      const typist = await novncProbe(bff.url, sessionId, alice.cookie);
      await until(typist, () => typist.framebuffer().width === 720, "the screen");
      for (let line = 0; line < 26; line += 1) typist.key(keysyms.enter);
      await sleep(500);
      typist.close();
      await noViewers(bff);
      fullScreenChange = async (viewers) => {
        const seen = viewers.map(
          (viewer) =>
            new Promise<void>((resolve) => {
              const stop = viewer.onUpdate((rects) => {
                if (rects.some((rect) => rect.width === 720 && rect.height === 400)) {
                  stop();
                  resolve();
                }
              });
            }),
        );
        viewers[0]!.key(keysyms.enter);
        await Promise.all(seen);
      };
    }
    const watchers: Watchers = {
      owner: alice.cookie,
      staff: [(await signIn(bff.url, "tara", "demo")).cookie, (await signIn(bff.url, "ivan", "demo")).cookie],
    };
    const load: LoadRound[] = [];
    for (let round = 0; round < loadRounds; round += 1) {
      const order = round % 2 === 0 ? [1, manyViewers] : [manyViewers, 1];
      for (const count of order)
        load.push(await loadRound(bff, sessionId, watchers, count, fullScreenChange));
      process.stdout.write(".");
    }
    process.stdout.write("\n");
    serial?.close();

    reportLatency(samples, run);
    reportLoad(load, changeLabel, run);
    console.log(`\n  guest: ${label}; the whole run ${fixed((performance.now() - started) / 60_000)} min`);
  } finally {
    for (const probe of probes) probe.close();
    if (sessionId && alice)
      await api(bff.url, alice, "DELETE", `/api/sessions/${sessionId}`).catch(() => undefined);
    if (sessionId && guests === "qemu") await untilQemuGone(sessionId, 60_000).catch(() => undefined);
    await bff.stop();
    await emulator.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

function hostLine(): string {
  const cores = readFileSync("/proc/cpuinfo", "utf8").match(/^processor\s*:/gm)?.length ?? "?";
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  return `${cores} cores, load average ${load}`;
}

await main();
