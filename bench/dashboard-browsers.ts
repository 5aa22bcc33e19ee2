// The simulated browsers of bench/dashboard.ts, in a worker thread so their own work does not sit
// on the event loop of the BFF being measured. Each browser polls like TanStack Query does: one
// request at a time, every `intervalMs`, revalidating with the ETag it was last given.
import { parentPort, workerData } from "node:worker_threads";

export interface BrowsersInput {
  url: string;
  cookies: string[];
  seconds: number;
  intervalMs: number;
  timeoutMs: number;
}

export interface BrowsersResult {
  latenciesMs: number[];
  notModified: number;
  ok: number;
  failed: number;
  timedOut: number;
}

async function pollLikeABrowser(cookie: string, input: BrowsersInput, endAt: number, result: BrowsersResult) {
  let etag: string | undefined;
  await sleep(Math.random() * input.intervalMs);
  while (performance.now() < endAt) {
    const startedAt = performance.now();
    try {
      const response = await fetch(input.url, {
        headers: { cookie, accept: "application/json", ...(etag ? { "if-none-match": etag } : {}) },
        signal: AbortSignal.timeout(input.timeoutMs),
      });
      await response.arrayBuffer();
      result.latenciesMs.push(performance.now() - startedAt);
      if (response.status === 304) result.notModified += 1;
      else if (response.status === 200) {
        result.ok += 1;
        etag = response.headers.get("etag") ?? undefined;
      } else result.failed += 1;
    } catch (error) {
      if ((error as Error).name === "TimeoutError") result.timedOut += 1;
      else result.failed += 1;
    }
    await sleep(startedAt + input.intervalMs - performance.now());
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

if (parentPort) {
  const input = workerData as BrowsersInput;
  const result: BrowsersResult = { latenciesMs: [], notModified: 0, ok: 0, failed: 0, timedOut: 0 };
  const endAt = performance.now() + input.seconds * 1000;
  parentPort.postMessage("started");
  await Promise.all(input.cookies.map((cookie) => pollLikeABrowser(cookie, input, endAt, result)));
  parentPort.postMessage(result);
}
