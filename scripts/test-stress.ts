// `npm run test:stress`: the unit and integration tests on a machine made busy on purpose, to find the
// tests that hold only on a quiet one (docs/architecture.md, "Tests on a busy machine"). CPU-bound spinner processes, as many as asked,
// run beside each round of `vitest run`; every failing test is tallied across the rounds, and the run
// passes only if every round did. Nothing is retried.
//
//   npm run test:stress -- [--rounds 5] [--spinners 2] [--until-fail] [vitest filters...]
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    spinners: { type: "string", default: "2" },
    // Stop at the first failing round (to catch a rare failure's log while it is fresh).
    "until-fail": { type: "boolean", default: false },
  },
  allowPositionals: true,
});
const rounds = Number(values.rounds);
const spinnerCount = Number(values.spinners);
if (!Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(spinnerCount) || spinnerCount < 0) {
  console.error("usage: npm run test:stress -- [--rounds N>=1] [--spinners N>=0] [--until-fail] [filters]");
  process.exit(2);
}

interface JsonReport {
  numFailedTests: number;
  numTotalTests: number;
  testResults: {
    name: string;
    message?: string;
    assertionResults: { fullName: string; status: string; failureMessages: string[] }[];
  }[];
}

/** Each spinner keeps one core busy at the tests' own priority, as another job on the machine would. */
function startSpinners(count: number): ChildProcess[] {
  return Array.from({ length: count }, () =>
    spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
  );
}

function runRound(reportFile: string): Promise<number> {
  const vitest = spawn(
    process.execPath,
    [
      "node_modules/vitest/vitest.mjs",
      "run",
      "--reporter=dot",
      "--reporter=json",
      `--outputFile.json=${reportFile}`,
      ...positionals,
    ],
    { stdio: "inherit" },
  );
  return new Promise((resolve) => vitest.on("exit", (code) => resolve(code ?? 1)));
}

/** The failing tests of one round, as "file › test: first line of the error". */
function failuresOf(reportFile: string): string[] {
  let report: JsonReport;
  try {
    report = JSON.parse(readFileSync(reportFile, "utf8")) as JsonReport;
  } catch {
    return ["(no report: vitest itself failed)"];
  }
  const found: string[] = [];
  for (const file of report.testResults) {
    const name = file.name.replace(`${process.cwd()}/`, "");
    const failed = file.assertionResults.filter((test) => test.status === "failed");
    for (const test of failed) {
      const firstLine = (test.failureMessages[0] ?? "").split("\n")[0];
      found.push(`${name} › ${test.fullName}: ${firstLine}`);
    }
    // A file that failed outside any test (a hook, an import) has no failed test to name.
    if (failed.length === 0 && file.message) found.push(`${name}: ${file.message.split("\n")[0]}`);
  }
  return found;
}

const workDir = mkdtempSync(join(tmpdir(), "lab-console-stress-"));
const spinners = startSpinners(spinnerCount);
const stopSpinners = () => spinners.forEach((spinner) => spinner.kill("SIGKILL"));
process.on("exit", stopSpinners);
process.on("SIGINT", () => process.exit(130));

const tally = new Map<string, number>();
let failedRounds = 0;
let ran = 0;
for (let round = 1; round <= rounds; round++) {
  console.log(`\ntest:stress: round ${round} of ${rounds}, ${spinnerCount} spinners beside it`);
  const reportFile = join(workDir, `round-${round}.json`);
  const started = Date.now();
  const code = await runRound(reportFile);
  ran = round;
  const failures = failuresOf(reportFile);
  if (code !== 0 && failures.length === 0) failures.push(`(vitest exited ${code} with no failing test)`);
  for (const failure of failures) tally.set(failure, (tally.get(failure) ?? 0) + 1);
  if (failures.length > 0) failedRounds++;
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`test:stress: round ${round} ${failures.length ? "FAILED" : "passed"} in ${seconds} s`);
  for (const failure of failures) console.log(`  ${failure}`);
  if (failures.length > 0 && values["until-fail"]) break;
}
stopSpinners();
// The reports of failing rounds are kept: their failure messages are whole there.
if (failedRounds === 0) rmSync(workDir, { recursive: true, force: true });
else console.log(`\ntest:stress: the failing rounds' vitest reports are in ${workDir}`);

console.log(`\ntest:stress: ${ran - failedRounds} of ${ran} rounds passed`);
for (const [failure, count] of [...tally].sort((a, b) => b[1] - a[1])) console.log(`  ${count}x ${failure}`);
process.exitCode = failedRounds === 0 ? 0 : 1;
