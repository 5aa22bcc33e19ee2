// A process's resident memory as Linux's /proc shows it, for the figures the real-guest tests, their
// bench and `npm run cluster:real` print.
import { readFileSync } from "node:fs";

/** In MiB, rounded; undefined when the process is gone or /proc does not say. */
export function residentMiB(pid: number): number | undefined {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}
