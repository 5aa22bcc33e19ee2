// The soak's students, in a worker thread so that their own work does not sit on the event loop of
// the console clients beside them. Each polls like the SPA's session pages do (one request at a
// time, revalidating with the ETag it was last given), only faster: the list of their sessions and
// their session, every `intervalMs`.
import { parentPort, workerData } from "node:worker_threads";
import { routeOf } from "./soak-routes.ts";

export interface StudentsInput {
  baseUrl: string;
  students: { cookie: string; paths: string[] }[];
  seconds: number;
  intervalMs: number;
}

export interface StudentsResult {
  /** Client-side milliseconds per request, by route. */
  latencyMs: Record<string, number[]>;
  /** Answers by route and status ("GET /api/sessions 304"); "error" when none came. */
  statuses: Record<string, number>;
}

const timeoutMs = 10_000;

async function poll(
  student: StudentsInput["students"][number],
  input: StudentsInput,
  endAt: number,
  result: StudentsResult,
): Promise<void> {
  const etags = new Map<string, string>();
  await sleep(Math.random() * input.intervalMs);
  while (performance.now() < endAt) {
    const roundStarted = performance.now();
    for (const path of student.paths) {
      const route = routeOf("GET", path);
      const started = performance.now();
      let status: number | "error";
      try {
        const etag = etags.get(path);
        const response = await fetch(input.baseUrl + path, {
          headers: { cookie: student.cookie, ...(etag ? { "if-none-match": etag } : {}) },
          signal: AbortSignal.timeout(timeoutMs),
        });
        await response.arrayBuffer();
        status = response.status;
        if (status === 200) etags.set(path, response.headers.get("etag") ?? "");
        (result.latencyMs[route] ??= []).push(performance.now() - started);
      } catch {
        status = "error";
      }
      const key = `${route} ${status}`;
      result.statuses[key] = (result.statuses[key] ?? 0) + 1;
    }
    await sleep(roundStarted + input.intervalMs - performance.now());
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

if (parentPort) {
  const input = workerData as StudentsInput;
  const result: StudentsResult = { latencyMs: {}, statuses: {} };
  const endAt = performance.now() + input.seconds * 1000;
  parentPort.postMessage("started");
  await Promise.all(input.students.map((student) => poll(student, input, endAt, result)));
  parentPort.postMessage(result);
}
