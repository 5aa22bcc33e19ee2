// bench/console.ts's memory measurement: the BFF's memory with many open consoles, idle, then each
// with a full scrollback, right after printing it and once quiet long enough for the scrollback to be
// archived.
import { randomBytes } from "node:crypto";
import { defaultConsoleLimits } from "../../src/server/console/limits.ts";
import { signInCookie } from "../../src/server/console/testing/console-client.ts";
import type { ClusterClient } from "../../src/server/kube/client.ts";
import { launchRunningSessions } from "./bench-cluster.ts";
import { openRelay, waitForText, type ConsoleBff, type RelayLine } from "./console-lines.ts";
import { mb } from "./spread.ts";
import { fixed, pad } from "./columns.ts";

/** The sessions `existing` and as many more as it takes, each a console a TA opens. */
export async function measureMemory(
  cluster: ClusterClient,
  existing: string[],
  consoleCount: number,
  startBff: () => Promise<ConsoleBff>,
): Promise<{ label: string; rss: number; heap: number; external: number; viewers: number }[]> {
  const more = await launchRunningSessions(
    cluster,
    Array.from({ length: Math.max(0, consoleCount - existing.length) }, (_, index) => `student-${index}`),
  );
  const sessions = [...existing, ...more].slice(0, consoleCount);
  const bff = await startBff();
  try {
    const tara = await signInCookie(bff.url, "tara");
    const rows: { label: string; rss: number; heap: number; external: number; viewers: number }[] = [];
    const sample = async (label: string) => {
      const { usage, consoles } = await bff.ask("memory", "memory");
      rows.push({
        label,
        rss: mb(usage.rss),
        heap: mb(usage.heapUsed),
        // Node counts its buffers (arrayBuffers) in external.
        external: mb(usage.external),
        viewers: consoles.viewers,
      });
    };
    await sample("no console open");

    const lines: RelayLine[] = [];
    for (let start = 0; start < sessions.length; start += 10) {
      lines.push(
        ...(await Promise.all(
          sessions.slice(start, start + 10).map((id) => openRelay(bff.url, tara, id, { mode: "observe" })),
        )),
      );
    }
    await sample(`${sessions.length} consoles, idle`);

    // A TA takes each keyboard and prints more than the BFF keeps (1,000 lines of scrollback).
    for (let start = 0; start < lines.length; start += 4) {
      await Promise.all(
        lines.slice(start, start + 4).map(async ({ line, socket, until }) => {
          socket.send(JSON.stringify({ type: "take-keyboard" }));
          await until((message) => message.type === "keyboard" && message.canType);
          const nonce = randomBytes(4).toString("hex");
          const done = waitForText(line, `fill-done-${nonce}`);
          line.send(
            `seq -f 'line %g of the scrollback, long enough to look like real output' 1 1500; echo fill-done''-${nonce}\r`,
          );
          await done;
        }),
      );
    }
    await sample(`${sessions.length} consoles, full scrollback`);
    // The BFF archives a console's scrollback once its output has been quiet for a moment.
    const quietMs = defaultConsoleLimits.scrollbackArchiveAfterMs + 1_000;
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    await sample(`${sessions.length} consoles, full scrollback, quiet ${quietMs / 1000} s`);
    await Promise.all(lines.map(({ line }) => line.close()));
    return rows;
  } finally {
    await bff.stop();
  }
}

export type MemoryRow = Awaited<ReturnType<typeof measureMemory>>[number];

export function reportMemory(memory: MemoryRow[], consoleCount: number): void {
  console.log(`\nBFF memory (MB, after a full GC)`);
  console.log(`  ${"".padEnd(42)}${pad("RSS", 8)}${pad("heap", 8)}${pad("buffers", 9)}`);
  for (const row of memory) {
    console.log(
      `  ${row.label.padEnd(42)}${pad(fixed(row.rss), 8)}${pad(fixed(row.heap), 8)}${pad(fixed(row.external), 9)}`,
    );
  }
  const base = memory[0]!.rss;
  for (const row of memory.slice(1)) {
    const cost = row.rss - base;
    const perConsole = cost / consoleCount;
    console.log(
      `  ${row.label.padEnd(42)}+${fixed(cost)} MB, ${fixed(perConsole, 2)} MB a console   goal < 1 MB ${perConsole < 1 ? "ok" : "MISSED"}`,
    );
  }
}
