// How long a test waits, from one place. A test waits for a condition, never for a time: these are
// the deadlines after which it gives up, and the slack of the few assertions whose point is a real
// deadline (a server cutting a silent client within its timeout). Both stretch with the machine's
// load, so that a busy machine makes the suite slower, not red: on two cores with two other
// CPU-bound jobs beside the tests (npm run test:stress), a timer fires late and a guest answers
// slowly, by about the load over the cores.
import { availableParallelism, loadavg } from "node:os";

/** Never more patient than this many times: past it, something is wrong, not slow. */
const mostPatience = 6;

/**
 * How many times longer than on a quiet machine things take now: the last minute's load average
 * over the cores, at least 1. LAB_TEST_PATIENCE sets it instead (e.g. 3 under a debugger).
 */
export function patienceFactor(): number {
  const fixed = Number(process.env.LAB_TEST_PATIENCE);
  if (fixed > 0) return fixed;
  const [lastMinute = 0] = loadavg();
  return Math.min(mostPatience, Math.max(1, lastMinute / availableParallelism()));
}

/** `ms` as long as it takes on this machine now. */
export function patient(ms: number): number {
  return Math.round(ms * patienceFactor());
}

/** Resolves once `condition` holds, checking every 20 ms; fails after `timeoutMs` (made patient). */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + patient(timeoutMs);
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Reads until `accept` takes what was read, every 25 ms; fails after `timeoutMs` (made patient). */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  { timeoutMs = 10_000, what = "the condition" }: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + patient(timeoutMs);
  let last: T = await read();
  while (!accept(last)) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
    last = await read();
  }
  return last;
}

/** Options for vi.waitFor, whose own default gives up after one second. */
export function patiently(timeoutMs = 10_000, intervalMs = 20): { timeout: number; interval: number } {
  return { timeout: patient(timeoutMs), interval: intervalMs };
}
