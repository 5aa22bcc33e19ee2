// Test helper: what the host sees of a guest's processes, read from /proc and the cgroup mounts
// without the emulator's help, so that a test checks the kernel's view and not our own bookkeeping.
import { existsSync } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import { dirname } from "node:path";

export interface HostProcess {
  pid: number;
  /** Real uid, from /proc/PID/status. */
  uid: number;
}

/** Host processes whose NUL-separated command line contains `text`. */
export async function hostProcessesRunning(text: string): Promise<HostProcess[]> {
  const found: HostProcess[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = await readFile(`/proc/${entry}/cmdline`, "utf8");
      if (!commandLine.includes(text)) continue;
      found.push({ pid: Number(entry), uid: await uidOf(Number(entry)) });
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** How many host processes (threads not counted) have this real uid. */
export async function hostProcessCountOf(uid: number): Promise<number> {
  let count = 0;
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if ((await uidOf(Number(entry))) === uid) count++;
    } catch {
      // gone meanwhile
    }
  }
  return count;
}

async function uidOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? "-1");
}

/** The uids of the host's /etc/passwd. */
export async function hostPasswdUids(): Promise<Set<number>> {
  const text = await readFile("/etc/passwd", "utf8");
  return new Set(
    text
      .split("\n")
      .filter((line) => line && !line.startsWith("#"))
      .map((line) => Number(line.split(":")[2])),
  );
}

export interface HostCgroup {
  /** "pids", "memory", "cpu" (v1) or "" (the v2 hierarchy). */
  controller: string;
  /** The cgroup's directory on the host. */
  dir: string;
}

/**
 * The directories of the cgroups a process is in, for the pids, memory and cpu controllers: each v1
 * hierarchy that has one of them, and the v2 hierarchy when it has any of them (or holds them all).
 */
export async function hostCgroupsOf(pid: number): Promise<HostCgroup[]> {
  const mounts = await cgroupMounts();
  const lines = (await readFile(`/proc/${pid}/cgroup`, "utf8")).trim().split("\n");
  const result: HostCgroup[] = [];
  for (const line of lines) {
    const [, controllers = "", path = ""] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    const mount = mounts.find((m) => (controllers === "" ? m.v2 : m.controllers.join(",") === controllers));
    if (!mount) continue;
    const wanted = controllers === "" ? ["pids", "memory", "cpu"] : controllers.split(",");
    const controller = wanted.find((name) => ["pids", "memory", "cpu"].includes(name));
    if (controller === undefined) continue;
    if (controllers === "" && !(await v2Holds(mount.mountPoint))) continue;
    const relative = path.startsWith(mount.root) ? path.slice(mount.root.length) : path;
    result.push({
      controller: controllers === "" ? "" : controller,
      dir: `${mount.mountPoint}${relative.startsWith("/") || relative === "" ? "" : "/"}${relative}`,
    });
  }
  return result;
}

/**
 * The directory of every cgroup a process is in, one per mounted hierarchy (v1 controllers or a name,
 * "" for v2), with the hierarchy's mount point: what guest root could mount in a namespace of its own.
 */
export async function hostAllCgroupsOf(
  pid: number,
): Promise<{ hierarchy: string; dir: string; mountPoint: string }[]> {
  const mounts = await cgroupMounts();
  const lines = (await readFile(`/proc/${pid}/cgroup`, "utf8")).trim().split("\n");
  const result: { hierarchy: string; dir: string; mountPoint: string }[] = [];
  for (const line of lines) {
    const [, controllers = "", path = ""] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    const mount = mounts.find((m) => (controllers === "" ? m.v2 : m.controllers.join(",") === controllers));
    if (!mount) continue;
    const relative = path.startsWith(mount.root) ? path.slice(mount.root.length) : path;
    const dir = `${mount.mountPoint}${relative.startsWith("/") || relative === "" ? "" : "/"}${relative}`;
    result.push({ hierarchy: controllers, dir: dir.replace(/\/$/, ""), mountPoint: mount.mountPoint });
  }
  return result;
}

async function v2Holds(mountPoint: string): Promise<boolean> {
  const available = (await readFile(`${mountPoint}/cgroup.controllers`, "utf8")).split(/\s+/);
  return ["pids", "memory"].every((name) => available.includes(name));
}

interface CgroupMount {
  mountPoint: string;
  root: string;
  v2: boolean;
  controllers: string[];
}

async function cgroupMounts(): Promise<CgroupMount[]> {
  const text = await readFile("/proc/self/mountinfo", "utf8");
  const mounts: CgroupMount[] = [];
  for (const line of text.trim().split("\n")) {
    const [before = "", after = ""] = line.split(" - ");
    const fields = before.split(" ");
    const [fsType = "", , superOptions = ""] = after.split(" ");
    if (fsType !== "cgroup" && fsType !== "cgroup2") continue;
    const known = ["pids", "memory", "cpu", "cpuacct", "cpuset", "blkio", "devices", "freezer"];
    mounts.push({
      root: fields[3] ?? "/",
      mountPoint: fields[4] ?? "",
      v2: fsType === "cgroup2",
      controllers: superOptions
        .split(",")
        .filter((option) => known.includes(option) || option.startsWith("name=")),
    });
  }
  return mounts;
}

export interface HostCgroupLimits {
  pids?: number;
  memoryBytes?: number;
  /** CPU time per 100 ms period, in microseconds. */
  cpuQuotaUs?: number;
}

/** The limits the cgroups of a process have, v1 or v2 file names alike; undefined where unlimited. */
export async function hostCgroupLimitsOf(cgroups: HostCgroup[]): Promise<HostCgroupLimits> {
  return limitsOf(cgroups, async (dir, names) => limitIn(dir, names));
}

/**
 * The limits that hold the cgroups of a process: the least of each in its cgroup and every cgroup
 * above it, since a cgroup's limit holds all of its descendants.
 */
export async function hostEffectiveCgroupLimitsOf(cgroups: HostCgroup[]): Promise<HostCgroupLimits> {
  return limitsOf(cgroups, async (dir, names) => {
    let least: number | undefined;
    for (let at = dir; existsSync(`${at}/cgroup.procs`); at = dirname(at)) {
      const value = await limitIn(at, names);
      if (value !== undefined) least = Math.min(least ?? value, value);
      if (at === "/") break;
    }
    return least;
  });
}

async function limitsOf(
  cgroups: HostCgroup[],
  read: (dir: string, names: string[]) => Promise<number | undefined>,
): Promise<HostCgroupLimits> {
  const readFor = (controller: string, names: string[]) => {
    const cgroup =
      cgroups.find((c) => c.controller === controller) ?? cgroups.find((c) => c.controller === "");
    return cgroup ? read(cgroup.dir, names) : Promise.resolve(undefined);
  };
  const limits: HostCgroupLimits = {};
  const pids = await readFor("pids", ["pids.max"]);
  const memoryBytes = await readFor("memory", ["memory.max", "memory.limit_in_bytes"]);
  const cpuQuotaUs = await readFor("cpu", ["cpu.max", "cpu.cfs_quota_us"]);
  if (pids !== undefined) limits.pids = pids;
  if (memoryBytes !== undefined) limits.memoryBytes = memoryBytes;
  if (cpuQuotaUs !== undefined) limits.cpuQuotaUs = cpuQuotaUs;
  return limits;
}

/** The first of the files that the cgroup has, as a number; undefined for "max", -1 or none. */
async function limitIn(dir: string, names: string[]): Promise<number | undefined> {
  for (const name of names) {
    try {
      const value = Number((await readFile(`${dir}/${name}`, "utf8")).trim().split(" ")[0]);
      return Number.isFinite(value) && value >= 0 ? value : undefined;
    } catch {
      // not this hierarchy's name for it
    }
  }
  return undefined;
}
