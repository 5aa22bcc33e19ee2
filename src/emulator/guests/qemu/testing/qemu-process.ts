// The host's view of a QEMU guest, for the real-guest tests and bench: its process, and its memory.
import { readdirSync, readFileSync } from "node:fs";

/** The QEMU process of a VMI's guest, found by the guest name on its command line (qemu-command.ts). */
export function qemuPidOf(vmiName: string): number | undefined {
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline.includes("qemu-system") && cmdline.includes(`guest=${vmiName},`)) return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** A process's resident memory, in MiB. */
export function residentMiB(pid: number): number {
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Math.round(Number(rss) / 1024);
}
