// The first process inside a sandbox's pid namespace, found through /proc. When it dies the kernel kills
// every other process of the guest, so it is the process to kill, and the one to watch before the
// guest's files are removed: as long as any guest process lives it could swap a directory for a symlink
// under the feet of a recursive delete.
import { readFile, readdir, readlink } from "node:fs/promises";

export interface ProcessIdentity {
  pid: number;
  /** Start time in clock ticks since boot (field 22 of /proc/PID/stat): tells a reused pid apart. */
  startTime: string;
}

/** The launcher's (bwrap's or unshare's) only child: the pid namespace's first process. */
export async function namespaceInitOf(launcherPid: number): Promise<ProcessIdentity | undefined> {
  let children: string;
  try {
    children = await readFile(`/proc/${launcherPid}/task/${launcherPid}/children`, "utf8");
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(children.trim().split(/\s+/)[0] ?? "", 10);
  if (!Number.isInteger(pid)) return undefined;
  const stat = await readStat(pid);
  return stat && { pid, startTime: stat.startTime };
}

/** True while the process runs; false once it is gone, a zombie, or its pid belongs to another process. */
export async function isRunning(process: ProcessIdentity): Promise<boolean> {
  const stat = await readStat(process.pid);
  return (
    stat !== undefined && stat.startTime === process.startTime && stat.state !== "Z" && stat.state !== "X"
  );
}

export async function waitUntilEnded(process: ProcessIdentity, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (await isRunning(process)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/**
 * Sends SIGKILL to every process in the pid namespace of `init` whose command line contains `text`;
 * returns how many, once they have died. Like the kernel's OOM killer, it picks processes whatever
 * their owner. A killed process keeps its command line until it has exited, which on a busy machine
 * takes a while: a second call made before then would find and count it again.
 */
export async function killInNamespace(init: ProcessIdentity, text: string): Promise<number> {
  const namespace = await readlink(`/proc/${init.pid}/ns/pid`).catch(() => undefined);
  if (namespace === undefined) return 0;
  const killed: ProcessIdentity[] = [];
  for (const entry of await readdir("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === init.pid) continue;
    const [ns, commandLine, stat] = await Promise.all([
      readlink(`/proc/${pid}/ns/pid`).catch(() => undefined),
      readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => ""),
      readStat(pid),
    ]);
    if (ns !== namespace || !stat || !commandLine.replaceAll("\0", " ").includes(text)) continue;
    try {
      process.kill(pid, "SIGKILL");
      killed.push({ pid, startTime: stat.startTime });
    } catch {
      // gone meanwhile
    }
  }
  await Promise.all(killed.map((each) => waitUntilEnded(each, 5_000)));
  return killed.length;
}

/**
 * How long stopping every process of a guest may take before it counts as impossible. It returns as
 * soon as none runs; on a machine loaded several times over, a pass over /proc alone takes seconds.
 */
const stopTimeoutMs = 30_000;

/**
 * Sends SIGSTOP to every process in the pid namespace of `init`, itself included, until none runs:
 * a process forked meanwhile is caught by the next pass. Only SIGKILL ends them afterwards. Returns
 * the processes it stopped (not those stopped already, such as a student's suspended job).
 */
export async function stopNamespace(init: ProcessIdentity): Promise<ProcessIdentity[]> {
  const namespace = await readlink(`/proc/${init.pid}/ns/pid`).catch(() => undefined);
  if (namespace === undefined) return [];
  const stoppedHere = new Map<string, ProcessIdentity>();
  // A stop takes effect when the kernel next schedules the process, which on a busy machine may take
  // a while: the passes go on until nothing runs, for as long as a guest could take to get that far.
  const deadline = Date.now() + stopTimeoutMs;
  for (;;) {
    let running = 0;
    for (const entry of await readdir("/proc")) {
      const pid = Number(entry);
      if (!Number.isInteger(pid)) continue;
      const ns = await readlink(`/proc/${pid}/ns/pid`).catch(() => undefined);
      if (ns !== namespace) continue;
      const stat = await readStat(pid);
      // Stopped already, or a zombie that no signal changes.
      if (!stat || ["T", "t", "Z", "X"].includes(stat.state)) continue;
      running++;
      try {
        // Again for one signalled before: another guest process may have let it go on meanwhile.
        process.kill(pid, "SIGSTOP");
        stoppedHere.set(`${pid}:${stat.startTime}`, { pid, startTime: stat.startTime });
      } catch {
        // gone meanwhile
      }
    }
    if (running === 0) return [...stoppedHere.values()];
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`the guest's processes (pid namespace of ${init.pid}) do not stop`);
}

/**
 * Sends SIGCONT to the processes stopNamespace stopped, again until none of them stays stopped.
 * A program that follows its child's stops (util-linux script, which holds the guest's console PTY,
 * stops itself when waitpid reports its shell stopped) must find its children running already when
 * it runs again, or it stops itself at a moment no pass may see (its console then stays dead): so
 * each pass reads every state first and then continues the youngest processes first, children
 * before the parents that started them, with nothing awaited between the signals.
 */
export async function continueProcesses(processes: readonly ProcessIdentity[]): Promise<void> {
  for (let pass = 0; pass < 100; pass++) {
    const states = await Promise.all(processes.map((identity) => readStat(identity.pid)));
    const stopped = processes
      .filter((identity, index) => {
        const stat = states[index];
        return stat !== undefined && stat.startTime === identity.startTime && stat.state === "T";
      })
      .toSorted((a, b) => Number(b.startTime) - Number(a.startTime) || b.pid - a.pid);
    if (stopped.length === 0) return;
    for (const identity of stopped) {
      try {
        process.kill(identity.pid, "SIGCONT");
      } catch {
        // gone meanwhile
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Sends `signal` to the longest-running process in the pid namespace of `init` whose command name is
 * `comm` (what /proc/PID/comm shows); false when there is none. The kernel's way to reach a guest's
 * init, which it knows as PID 1: the sandbox's service manager names itself so at start, before
 * anything of the student's runs, so the oldest of that name is it.
 */
export async function signalOldestNamed(
  init: ProcessIdentity,
  comm: string,
  signal: NodeJS.Signals,
): Promise<boolean> {
  const namespace = await readlink(`/proc/${init.pid}/ns/pid`).catch(() => undefined);
  if (namespace === undefined) return false;
  let oldest: { pid: number; startTime: number } | undefined;
  for (const entry of await readdir("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const [ns, name, stat] = await Promise.all([
      readlink(`/proc/${pid}/ns/pid`).catch(() => undefined),
      readFile(`/proc/${pid}/comm`, "utf8").catch(() => ""),
      readStat(pid),
    ]);
    if (ns !== namespace || name.trim() !== comm || !stat || stat.state === "Z") continue;
    const startTime = Number(stat.startTime);
    if (!oldest || startTime < oldest.startTime) oldest = { pid, startTime };
  }
  if (!oldest) return false;
  try {
    process.kill(oldest.pid, signal);
    return true;
  } catch {
    return false;
  }
}

async function readStat(pid: number): Promise<{ state: string; startTime: string } | undefined> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may itself contain ") ".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const [state, startTime] = [fields[0], fields[19]];
  return state && startTime ? { state, startTime } : undefined;
}
