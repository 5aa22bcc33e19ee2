// The soak's figures (bench/soak.ts): gathered into one report, checked for what must not happen,
// printed.
import { loadavg } from "node:os";
import type { SoakBffReport } from "../soak-bff.ts";
import type { ConsoleFigures } from "../soak-console.ts";
import type { StudentsResult } from "../soak-students.ts";

export interface Graded {
  runMs: number;
  sessions: number;
  ungradable: number;
  status: string;
}

export interface Figures {
  seconds: number;
  students: number;
  consoles: number;
  loadAverage: number;
  kube: { requestsPerSecond: number; byVerb: Record<string, number> };
  routes: {
    route: string;
    count: number;
    serverP50: number;
    serverP99: number;
    clientP50: number;
    clientP99: number;
  }[];
  studentStatuses: Record<string, number>;
  console: {
    bytesDelivered: number;
    linesDelivered: number;
    linesLost: number;
    linesReordered: number;
    bytesUnexpected: number;
    consolesWithoutOutput: number;
    keystrokes: number;
    echoP50: number;
    echoP99: number;
    echoMax: number;
    echoTimeouts: number;
  };
  grading: Graded;
  bff: SoakBffReport["rssMb"] & { eventLoopDelayMs: SoakBffReport["eventLoopDelayMs"]; cpuPercent: number };
  hub: SoakBffReport["consoles"];
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** The soak's figures from what the BFF, the students and the consoles measured. */
export function summarize(input: {
  elapsed: number;
  studentCount: number;
  consoleCount: number;
  studentsResult: StudentsResult;
  report: SoakBffReport;
  consoles: ConsoleFigures[];
  kube: { before: Record<string, number>; after: Record<string, number> };
  graded: Graded;
}): Figures {
  const { elapsed, studentCount, consoleCount, studentsResult, report, consoles, kube } = input;
  const byVerb: Record<string, number> = {};
  for (const [verb, count] of Object.entries(kube.after)) {
    const delta = count - (kube.before[verb] ?? 0);
    if (delta > 0) byVerb[verb] = delta;
  }
  const total = Object.values(byVerb).reduce((sum, count) => sum + count, 0);
  const routes = Object.entries(report.serverMs)
    .map(([route, samples]) => {
      const client = studentsResult.latencyMs[route] ?? [];
      return {
        route,
        count: samples.length,
        serverP50: percentile(samples, 50),
        serverP99: percentile(samples, 99),
        clientP50: percentile(client, 50),
        clientP99: percentile(client, 99),
      };
    })
    .sort((a, b) => b.count - a.count);
  const echo = consoles.flatMap((each) => each.echoMs);
  const sum = (pick: (each: ConsoleFigures) => number) => consoles.reduce((acc, each) => acc + pick(each), 0);
  return {
    seconds: elapsed,
    students: studentCount,
    consoles: consoleCount,
    loadAverage: loadavg()[0] ?? 0,
    kube: { requestsPerSecond: total / elapsed, byVerb },
    routes,
    studentStatuses: studentsResult.statuses,
    console: {
      bytesDelivered: sum((each) => each.bytes),
      linesDelivered: sum((each) => each.lines),
      linesLost: sum((each) => each.lost),
      linesReordered: sum((each) => each.reordered),
      bytesUnexpected: sum((each) => each.unexpected),
      consolesWithoutOutput: consoles.filter((each) => each.lines === 0).length,
      keystrokes: echo.length,
      echoP50: percentile(echo, 50),
      echoP99: percentile(echo, 99),
      echoMax: Math.max(...echo),
      echoTimeouts: sum((each) => each.echoTimeouts),
    },
    grading: input.graded,
    bff: {
      ...report.rssMb,
      eventLoopDelayMs: report.eventLoopDelayMs,
      cpuPercent: (report.cpuSeconds / elapsed) * 100,
    },
    hub: report.consoles,
  };
}

/** What went wrong: lost, reordered or garbled output, failed requests, sessions not graded. */
export function verdict(figures: Figures): string[] {
  const problems: string[] = [];
  const { console: output } = figures;
  if (output.linesLost > 0) problems.push(`consoles lost ${output.linesLost} lines of output`);
  if (output.linesReordered > 0)
    problems.push(`consoles reordered or repeated ${output.linesReordered} lines`);
  if (output.bytesUnexpected > 0) problems.push(`consoles delivered ${output.bytesUnexpected} garbled bytes`);
  if (output.consolesWithoutOutput > 0)
    problems.push(`${output.consolesWithoutOutput} consoles delivered nothing`);
  if (output.echoTimeouts > 0) problems.push(`${output.echoTimeouts} keystrokes were not echoed within 5 s`);
  const failed = Object.entries(figures.studentStatuses).filter(([key]) => !/ (200|304)$/.test(key));
  for (const [key, count] of failed) problems.push(`${count} student requests answered ${key}`);
  if (figures.grading.status !== "completed" || figures.grading.ungradable > 0) {
    problems.push(
      `the grading run ended ${figures.grading.status} with ${figures.grading.ungradable} ungradable`,
    );
  }
  return problems;
}

/** How often the students polled, the consoles printed and their owners typed, in ms. */
export interface SoakPace {
  pollMs: number;
  tickMs: number;
  typeMs: number;
}

export function printFigures(figures: Figures, { pollMs, tickMs, typeMs }: SoakPace): void {
  const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "-");
  const { console: output, bff, kube, grading } = figures;
  console.log(
    `\n${figures.students} students polling every ${pollMs / 1000} s, ${figures.consoles} consoles (a line every ${tickMs} ms, a key every ~${typeMs} ms), grading ${grading.sessions} sessions; ${fixed(figures.seconds)} s, load average ${fixed(figures.loadAverage)}\n`,
  );
  console.log(
    `Kubernetes API: ${fixed(kube.requestsPerSecond, 2)} requests/s (${Object.entries(kube.byVerb)
      .map(([verb, count]) => `${verb} ${count}`)
      .join(", ")})`,
  );
  console.log("\nBFF latency per route (ms): in the BFF, and as the students saw it");
  const header = ["route", "requests", "p50", "p99", "client p50", "client p99"];
  const rows = figures.routes.map((row) => [
    row.route,
    String(row.count),
    fixed(row.serverP50, 2),
    fixed(row.serverP99, 2),
    fixed(row.clientP50, 2),
    fixed(row.clientP99, 2),
  ]);
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column]!.length)));
  for (const row of [header, ...rows]) {
    console.log(
      `  ${row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ")}`,
    );
  }
  console.log(
    `\nConsoles: ${output.bytesDelivered} bytes delivered (${output.linesDelivered} lines), ${output.linesLost} lines lost, ${output.linesReordered} reordered, ${output.bytesUnexpected} bytes garbled`,
  );
  console.log(
    `Keystroke echo (${output.keystrokes} keys): p50 ${fixed(output.echoP50, 2)} ms, p99 ${fixed(output.echoP99, 2)} ms, max ${fixed(output.echoMax, 1)} ms, ${output.echoTimeouts} not echoed`,
  );
  console.log(
    `Grading run: ${grading.sessions} sessions in ${fixed(grading.runMs / 1000, 1)} s (polled every second), ${grading.ungradable} ungradable, ${grading.status}`,
  );
  console.log(
    `BFF: RSS ${bff.start} MB at the start, ${bff.max} MB at most, ${bff.end} MB at the end; event-loop delay p50 ${fixed(bff.eventLoopDelayMs.p50, 1)} ms, p99 ${fixed(bff.eventLoopDelayMs.p99, 1)} ms, max ${fixed(bff.eventLoopDelayMs.max, 1)} ms; CPU ${fixed(bff.cpuPercent, 0)}% of one core`,
  );
  console.log(
    `Console hub at the end: ${figures.hub.consoles} consoles, ${figures.hub.connectedUpstreams} connected to their VMs, ${figures.hub.viewers} viewers`,
  );
}
