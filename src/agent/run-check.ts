// Runs one check: a shell command as the checks' user, in their home, with a timeout and an output cap.
import { spawn, type ChildProcess } from "node:child_process";
import { agentLimits, type AgentCheckResult, type AgentCheckSpec } from "../common/agent-protocol.ts";
import { HttpError } from "./http-io.ts";
import { launchFor, type RunAs } from "./run-as.ts";
import { parseScoreLine } from "./score-line.ts";
import { TailBuffer } from "./tail-buffer.ts";

/** Enough of stdout's end to hold its last line. */
const stdoutTailBytes = 4096;

/**
 * After the command exits, how long its output pipes may stay open. A process that left the
 * check's process group (setsid, a daemon) can hold them for ever; its output is then cut off.
 */
const drainMs = 1000;

export interface RunCheckOptions {
  outputBytes?: number;
  /** Aborting kills the check (the client went away, or the agent is stopping). */
  signal?: AbortSignal;
}

/**
 * The check runs in a process group of its own (a new session), so the timeout and the clean-up
 * reach everything it started: its children and `cmd &` background jobs die with it. Whatever is
 * left of the group when the command exits is killed too; checks observe, they leave nothing behind.
 */
export async function runCheck(
  spec: AgentCheckSpec,
  runAs: RunAs,
  options: RunCheckOptions = {},
): Promise<AgentCheckResult> {
  options.signal?.throwIfAborted();
  const launch = launchFor(runAs, spec.run);
  const started = performance.now();
  const child = spawn(launch.file, launch.args, {
    cwd: launch.cwd,
    env: launch.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = new TailBuffer(options.outputBytes ?? agentLimits.outputBytes);
  const stdoutTail = new TailBuffer(stdoutTailBytes);
  child.stdout?.on("data", (chunk: Buffer) => {
    output.push(chunk);
    stdoutTail.push(chunk);
  });
  child.stderr?.on("data", (chunk: Buffer) => output.push(chunk));
  // Listen before the exit: 'close' may follow 'exit' within the same tick.
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));

  const killGroup = () => killProcessGroup(child);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, spec.timeoutSeconds * 1000);
  options.signal?.addEventListener("abort", killGroup, { once: true });
  try {
    const { exitCode, signal } = await exited(child, spec.id);
    killGroup();
    await drained(child, closed);
    return {
      id: spec.id,
      exitCode,
      signal,
      timedOut,
      output: output.text(),
      outputTruncated: output.truncated,
      durationMs: Math.round(performance.now() - started),
      score: parseScoreLine(stdoutTail.text()),
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", killGroup);
  }
}

function exited(
  child: ChildProcess,
  checkId: string,
): Promise<{ exitCode: number | null; signal: string | null }> {
  return new Promise((resolve, reject) => {
    child.once("error", (error) => {
      reject(new HttpError(500, "spawn_failed", `Cannot start check "${checkId}": ${error.message}`));
    });
    child.once("exit", (exitCode, signal) => resolve({ exitCode, signal }));
  });
}

async function drained(child: ChildProcess, closed: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), drainMs);
  });
  const timedOut = await Promise.race([closed.then(() => false), gaveUp]);
  clearTimeout(timer);
  if (timedOut) {
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
}

function killProcessGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // ESRCH: the group is already gone. Nothing else can be done about EPERM from a timer either.
  }
}
