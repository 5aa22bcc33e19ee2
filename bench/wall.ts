// What the class wall costs the BFF: 100 consoles that print all the time (each guest runs a loop
// printing a line every 0.1 s), shown on one wall. Prints the BFF's CPU and the wall's bytes per
// second with the wall open, against the same busy consoles with no wall (the BFF still parses their
// output: that is the console hub's cost, not the wall's), and after the wall closed (a hidden tab).
//
//   npm run bench:wall [-- --consoles 100 --seconds 10]
//
// The emulator and the BFF run as processes of their own (the BFF as bench:console starts it); CPU
// is read from /proc for the BFF's process alone.
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { ConsoleServerMessage } from "../src/common/console-protocol.ts";
import { signInCookie } from "../src/server/console/testing/console-client.ts";
import { openBrowserSocket } from "../src/server/testing/browser-socket.ts";
import { WallTestClient } from "../src/server/wall/testing/wall-client.ts";
import type { BffMessage } from "./console-bff.ts";
import { benchLab, launchRunningSessions, startBenchCluster } from "./support/bench-cluster.ts";
import { forkBff } from "./support/bff-process.ts";

const { values: args } = parseArgs({
  options: {
    consoles: { type: "string", default: "100" },
    seconds: { type: "string", default: "10" },
  },
});
const consoleCount = Number(args.consoles);
const sampleSeconds = Number(args.seconds);
// A builtin loop (no fork per line): `read -t` waits 0.1 s on the serial line nobody types into.
const busyLoop = "while :; do printf 'tick %s %s\\n' $RANDOM $SECONDS; read -t 0.1 _; done\r";

/** CPU seconds (user + system) the process used so far, from /proc/<pid>/stat. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A TA takes each console's keyboard, starts the loop and leaves: the guest goes on printing. */
async function startBusyLoop(bffUrl: string, cookie: string, sessionId: string): Promise<void> {
  const socket = openBrowserSocket(bffUrl, `/api/sessions/${sessionId}/console?mode=observe`, { cookie });
  await new Promise<void>((resolve, reject) => {
    socket.on("message", (data: Buffer, isBinary) => {
      if (isBinary) return;
      const message = ConsoleServerMessage.parse(JSON.parse(data.toString("utf8")));
      if (message.type === "status" && message.state === "connected") {
        socket.send(JSON.stringify({ type: "take-keyboard" }));
      }
      if (message.type === "keyboard" && message.canType) {
        socket.send(Buffer.from(busyLoop), { binary: true });
        resolve();
      }
      if (message.type === "ended") reject(new Error(message.reason));
    });
    socket.once("error", reject);
  });
  // Let the keystrokes leave before the socket closes.
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.close();
}

async function measure(
  pid: number,
  wall: WallTestClient | undefined,
): Promise<{ cpuPercent: number; kbPerSecond: number; framesPerSecond: number }> {
  const cpuBefore = await cpuSeconds(pid);
  const bytesBefore = wall?.bytes ?? 0;
  const framesBefore = wall?.frames ?? 0;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, sampleSeconds * 1000));
  const seconds = (performance.now() - started) / 1000;
  return {
    cpuPercent: (((await cpuSeconds(pid)) - cpuBefore) / seconds) * 100,
    kbPerSecond: ((wall?.bytes ?? 0) - bytesBefore) / 1024 / seconds,
    framesPerSecond: ((wall?.frames ?? 0) - framesBefore) / seconds,
  };
}

async function main(): Promise<void> {
  console.log(`Starting the emulator, ${consoleCount} VMs and the BFF...`);
  const { stateDir, emulator, cluster } = await startBenchCluster("wall");
  try {
    const sessions = await launchRunningSessions(
      cluster,
      Array.from({ length: consoleCount }, (_, index) => `student-${index}`),
    );
    const bff = await forkBff<BffMessage>("console-bff.ts", {
      kubeconfigPath: emulator.kubeconfigPath,
      env: { DATA_DIR: path.join(stateDir, "bff") },
    });
    try {
      const tara = await signInCookie(bff.url, "tara");
      for (let start = 0; start < sessions.length; start += 10) {
        await Promise.all(sessions.slice(start, start + 10).map((id) => startBusyLoop(bff.url, tara, id)));
      }
      console.log(`${consoleCount} consoles printing; measuring ${sampleSeconds} s each...`);
      // The consoles linger 60 s after their last viewer: they are still open and parsing here.
      const noWall = await measure(bff.pid, undefined);

      const wall = await WallTestClient.connect(bff.url, benchLab.id, { cookie: tara });
      await wall.until(() => wall.screens.size >= consoleCount, `${consoleCount} screens`, 60_000);
      const withWall = await measure(bff.pid, wall);
      const screensPerFrame = wall.frames > 0 ? wall.screens.size : 0;
      wall.close();
      // A hidden tab closes its wall: the BFF stops sending at once.
      const hidden = await measure(bff.pid, wall);

      const row = (label: string, sample: Awaited<ReturnType<typeof measure>>) =>
        console.log(
          `  ${label.padEnd(34)}${sample.cpuPercent.toFixed(1).padStart(8)} %${sample.kbPerSecond.toFixed(1).padStart(10)} KiB/s${sample.framesPerSecond.toFixed(1).padStart(8)} frames/s`,
        );
      console.log(`\nThe BFF with ${consoleCount} busy consoles (10 lines/s each), over ${sampleSeconds} s`);
      console.log(`  ${"".padEnd(34)}${"BFF CPU".padStart(10)}${"wall".padStart(16)}`);
      row("no wall (consoles parsing only)", noWall);
      row("one wall open", withWall);
      row("wall closed (tab hidden)", hidden);
      console.log(
        `  the wall's cost: ${(withWall.cpuPercent - noWall.cpuPercent).toFixed(1)} % CPU of one core, ` +
          `${(withWall.kbPerSecond / consoleCount).toFixed(2)} KiB/s per console (${screensPerFrame} screens shown)`,
      );
    } finally {
      await bff.stop();
    }
  } finally {
    await emulator.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

await main();
