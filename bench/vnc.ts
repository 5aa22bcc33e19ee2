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
// socket to the BFF as KubeVirt's virt-handler does, runs in this process beside the viewers.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import type WebSocket from "ws";
import { ensureGuestImage } from "../src/emulator/guests/qemu/image.ts";
import { findTool } from "../src/emulator/guests/qemu/host-tools.ts";
import { accelerator } from "../src/emulator/guests/qemu/qemu-command.ts";
import { qemuPidOf, untilQemuGone } from "../src/emulator/guests/qemu/testing/qemu-process.ts";
import { bootMs, realGuestsStateDir } from "../src/emulator/guests/qemu/testing/real-guests.ts";
import { loadVgaFont } from "../src/emulator/guests/screen/vga-font.ts";
import { startTestEmulator, type TestEmulator } from "../src/emulator/testing/start.ts";
import { screenText } from "../src/emulator/testing/screen-text.ts";
import { openVmiWebSocket } from "../src/server/kube/vmi-websocket.ts";
import { RfbClient, type Framebuffer, type Rect } from "../src/server/screen/rfb-client.ts";
import { ScreenTestClient } from "../src/server/screen/testing/screen-client.ts";
import { openBrowserSocket, opened } from "../src/server/testing/browser-socket.ts";
import type { BffMessage } from "./console-bff.ts";
import { api, signIn, type Person } from "./support/browser-api.ts";
import { benchNamespace } from "./support/bench-cluster.ts";
import { forkBff, type BffProcess } from "./support/bff-process.ts";
import { NovncLikeViewer } from "./support/novnc-like-viewer.ts";

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

const keysyms = { x: 0x78, backSpace: 0xff08, enter: 0xff0d } as const;
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

// The cell of the screen a probe watches

const glyphs = (() => {
  const font = loadVgaFont();
  if ("problem" in font) throw new Error(font.problem);
  return font.glyphs;
})();

interface Cell {
  row: number;
  column: number;
}

/** Whether the cell shows this character's glyph (" ": blank), its top 14 lines (the cursor blinks in the last two). */
function cellShows(screen: Framebuffer, cell: Cell, character: string): boolean {
  if (screen.width !== 720 || screen.height !== 400) return false;
  const code = character.charCodeAt(0);
  for (let line = 0; line < 14; line += 1) {
    let bits = 0;
    for (let x = 0; x < 8; x += 1) {
      const at = ((cell.row * 16 + line) * 720 + cell.column * 9 + x) * 4;
      if ((screen.pixels[at] ?? 0) > 0x40) bits |= 0x80 >> x;
    }
    if (bits !== (character === " " ? 0 : glyphs[code * 16 + line])) return false;
  }
  return true;
}

/** Whether the screen is in reverse video (light background): its two far corners are both light. */
function reversed(screen: Framebuffer): boolean | undefined {
  if (screen.width !== 720 || screen.height !== 400) return undefined;
  const light = (x: number, y: number) => (screen.pixels[(y * 720 + x) * 4] ?? 0) > 0x40;
  if (light(0, 0) && light(719, 399)) return true;
  if (!light(0, 0) && !light(719, 399)) return false;
  return undefined;
}

// Viewers, whichever way they are connected

interface Probe {
  label: string;
  framebuffer(): Framebuffer;
  bytes(): number;
  key(keysym: number): void;
  /** Calls `listener` after every applied update, with its rectangles. */
  onUpdate(listener: (rects: Rect[]) => void): () => void;
  close(): void;
}

/** Resolves with the milliseconds until `condition` holds after an update (at once if it holds now). */
function until(probe: Probe, condition: () => boolean, what: string, timeoutMs = 10_000): Promise<number> {
  const started = performance.now();
  if (condition()) return Promise.resolve(0);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      const { width, height } = probe.framebuffer();
      reject(
        new Error(
          `${probe.label}: no ${what} within ${timeoutMs / 1000} s (screen ${width}x${height}: ${JSON.stringify(screenText(probe.framebuffer()).filter(Boolean).slice(-3))})`,
        ),
      );
    }, timeoutMs);
    const stop = probe.onUpdate(() => {
      if (!condition()) return;
      clearTimeout(timer);
      stop();
      resolve(performance.now() - started);
    });
  });
}

function press(send: (keysym: number, down: boolean) => void, keysym: number): void {
  send(keysym, true);
  send(keysym, false);
}

/** RfbClient straight on the guest's VNC socket, as virt-handler dials it. */
async function directProbe(socketPath: string): Promise<Probe> {
  const socket = await new Promise<net.Socket>((resolve, reject) => {
    const connection = net.createConnection(socketPath, () => resolve(connection));
    connection.once("error", reject);
  });
  socket.setNoDelay(true);
  const listeners = new Set<(rects: Rect[]) => void>();
  let bytes = 0;
  const rfb: RfbClient = new RfbClient((data) => socket.write(data), {
    updated: (rects) => {
      rfb.requestUpdate(true);
      for (const listener of listeners) listener(rects);
    },
    failed: (reason) => console.error(`direct RFB failed: ${reason}`),
  });
  socket.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
    rfb.receive(chunk);
  });
  socket.on("error", () => undefined);
  return {
    label: "direct",
    framebuffer: () => rfb.framebuffer,
    bytes: () => bytes,
    key: (keysym) => press((k, down) => rfb.key(k, down), keysym),
    onUpdate(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => socket.destroy(),
  };
}

/** RfbClient through the BFF: the repo's own screen viewer (it asks for Zlib, Raw, CopyRect; the BFF sends Raw). */
async function bffRfbProbe(bffUrl: string, sessionId: string, cookie: string): Promise<Probe> {
  const client = await ScreenTestClient.connect(bffUrl, sessionId, { cookie });
  const listeners = new Set<(rects: Rect[]) => void>();
  let seen = 0;
  // After the client's own listener: the update, once whole, is applied by then.
  client.socket.on("message", (_data, isBinary) => {
    if (!isBinary || client.updates === seen) return;
    seen = client.updates;
    for (const listener of listeners) listener([]);
  });
  return {
    label: "via BFF (RfbClient)",
    framebuffer: () => client.rfb.framebuffer,
    bytes: () => client.bytesReceived,
    key: (keysym) => press((k, down) => client.rfb.key(k, down), keysym),
    onUpdate(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => client.close(),
  };
}

/** A viewer asking for noVNC's encodings through the BFF: what a browser gets. */
async function novncProbe(
  bffUrl: string,
  sessionId: string,
  cookie: string,
  mode?: "observe",
): Promise<Probe> {
  const query = mode ? `?mode=${mode}` : "";
  const socket: WebSocket = openBrowserSocket(bffUrl, `/api/sessions/${sessionId}/vnc${query}`, { cookie });
  const viewer = new NovncLikeViewer(socket);
  await opened(socket, `the screen of ${sessionId}`);
  return {
    label: "via BFF (noVNC's encodings)",
    framebuffer: () => viewer.framebuffer,
    bytes: () => viewer.bytes,
    key: (keysym) => press((k, down) => viewer.key(k, down), keysym),
    onUpdate: (listener) => viewer.onUpdate(listener),
    close: () => viewer.close(),
  };
}

// The guest

type Guests = "qemu" | "sandbox";

async function chooseGuests(): Promise<{ guests: Guests; label: string }> {
  if (args.guests === "sandbox") {
    return { guests: "sandbox", label: "SANDBOXED GUEST (asked for with --guests sandbox), not QEMU" };
  }
  const qemu = findTool("qemu-system-x86_64");
  if (!qemu) {
    console.log(
      "  QEMU is not installed (apt-get install qemu-system-x86): falling back to the sandboxed guest",
    );
    return { guests: "sandbox", label: "SANDBOXED GUEST (no QEMU on this machine), not QEMU" };
  }
  try {
    await ensureGuestImage(realGuestsStateDir, (line) => console.log(`  ${line}`));
  } catch (error) {
    console.log(
      `  the QEMU guest image cannot be had (${(error as Error).message}): falling back to the sandboxed guest`,
    );
    return { guests: "sandbox", label: "SANDBOXED GUEST (no QEMU guest image), not QEMU" };
  }
  return { guests: "qemu", label: `Debian under QEMU (${accelLine()})` };
}

function accelLine(): string {
  return accelerator() === "kvm" ? "KVM" : "TCG: no usable KVM here";
}

/** QEMU's own VNC socket for this VMI (`-vnc unix:PATH` on its command line, qemu-command.ts). */
function qemuVncSocket(sessionId: string): string {
  const pid = qemuPidOf(sessionId);
  if (pid === undefined) throw new Error(`no QEMU process for ${sessionId}`);
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  const value = argv[argv.indexOf("-vnc") + 1];
  if (!value?.startsWith("unix:")) throw new Error(`QEMU of ${sessionId} has no -vnc unix: socket`);
  return value.slice("unix:".length);
}

/** The sandboxed guest's screen socket (`<relay socket>-vnc`, guests/sandbox/guest.ts), found in the emulator's folder. */
function sandboxVncSocket(root: string): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const at = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(at);
      else if (entry.name.endsWith("-vnc") && statSync(at).isSocket()) found.push(at);
    }
  };
  walk(root);
  if (found.length !== 1)
    throw new Error(`expected one sandboxed screen socket under ${root}, found ${found.length}`);
  return found[0]!;
}

/** The VM's serial console straight from the emulator (the admin's credentials, as virtctl): a shell line. */
async function serialLine(emulator: TestEmulator, sessionId: string) {
  const socket = await openVmiWebSocket({
    kubeConfig: emulator.kubeConfig,
    namespace: benchNamespace,
    vmiName: sessionId,
    subresource: "console",
    options: { perMessageDeflate: false },
    signal: AbortSignal.timeout(30_000),
  });
  let tail = "";
  socket.on("message", (data: Buffer, isBinary) => {
    if (isBinary) tail = (tail + data.toString("latin1")).slice(-4096);
  });
  const send = (text: string) => socket.send(Buffer.from(text, "latin1"), { binary: true });
  return {
    send,
    /** Waits until the output since the last call ends with the shell's prompt, pressing Enter now and then. */
    async untilPrompt(timeoutMs: number): Promise<void> {
      tail = "";
      const deadline = Date.now() + timeoutMs;
      for (let attempt = 0; ; attempt += 1) {
        if (/student@[^\s]*:~\$ $/.test(tail)) return;
        if (Date.now() > deadline)
          throw new Error(
            `no shell prompt on the serial console; last output ${JSON.stringify(tail.slice(-200))}`,
          );
        if (attempt % 50 === 0) send("\r");
        await sleep(100);
      }
    },
    output: () => tail,
    close: () => socket.close(),
  };
}

// Measurements

interface Sample {
  label: string;
  ms: number[];
}

/** Locates the cursor's cell: types "x" on `probe`, finds it after the shell's prompt on every probe, erases it. */
async function cursorCell(typist: Probe, watchers: Probe[]): Promise<Cell> {
  typist.key(keysyms.x);
  let cell: Cell | undefined;
  await until(
    typist,
    () => {
      const rows = screenText(typist.framebuffer());
      const row = rows.findLastIndex((text) => /:~\$ x$/.test(text));
      if (row < 0) return false;
      cell = { row, column: rows[row]!.length - 1 };
      return true;
    },
    "typed x after the prompt",
  );
  const found = cell!;
  for (const probe of watchers) await until(probe, () => cellShows(probe.framebuffer(), found, "x"), "x");
  typist.key(keysyms.backSpace);
  for (const probe of watchers)
    await until(probe, () => cellShows(probe.framebuffer(), found, " "), "x erased");
  return found;
}

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

interface LoadFigures {
  /** The BFF's CPU milliseconds, and the bytes the average viewer received, over the phase. */
  cpuMs: number;
  bytesPerViewer: number;
  seconds: number;
  /** The area of the rectangles the first viewer was sent, in screens (720x400). */
  screens: number;
}

interface LoadRound {
  viewers: number;
  /** The same seconds as idle, before the viewers connect: what the BFF spends without them. */
  baseline: LoadFigures;
  /** Opening the viewers' sockets at once until each shows the screen. */
  join: LoadFigures;
  typing: LoadFigures;
  flips: LoadFigures;
  idle: LoadFigures;
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

// Reporting

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const median = (values: number[]) => percentile(values, 50);
const fixed = (value: number, digits = 1) => value.toFixed(digits);
const pad = (text: string, width: number) => text.padStart(width);
const kib = (bytes: number) => bytes / 1024;
const spread = (values: number[], digits = 1) =>
  `${fixed(Math.min(...values), digits)}-${fixed(Math.max(...values), digits)}`;

function reportLatency(samples: Sample[]): void {
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

function reportLoad(results: LoadRound[], changeLabel: string): void {
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

// The run

async function main(): Promise<void> {
  const started = performance.now();
  console.log("The screen (VNC): straight on the guest's VNC socket against through the BFF's screen hub");
  console.log(`  ${hostLine()}`);
  const { guests, label } = await chooseGuests();
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

    reportLatency(samples);
    reportLoad(load, changeLabel);
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

await main();
