// The cgroupfs operations that both the host's setup (cgroup-setup.ts, once at start) and each
// guest's own cgroups (guest-cgroups.ts) need: this emulator's folders made and removed, controllers
// enabled for a cgroup's children, v1 cpuset values copied down, and a cgroup tree emptied of its
// processes and removed, which both a guest's end and the sweep of a dead emulator's folder come to.
import { mkdir, readFile, readdir, rmdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { signalIfRunning } from "../host-signals.ts";

export type CgroupController = "pids" | "memory" | "cpu";

/** Where a v2 cgroup's own processes go once it enables controllers for its children. */
export const processesLeaf = "lab-emulator-processes";

export interface Hierarchy {
  version: 1 | 2;
  /** The controllers whose limits are written here; none in a hierarchy that only isolates. */
  controllers: CgroupController[];
  /** For the operator: the limits' controllers, or what the hierarchy is (freezer, name=systemd, v2). */
  label: string;
  /** v1 cpuset takes no process in a cgroup until its cpuset.cpus and cpuset.mems are set. */
  cpuset: boolean;
  /** This emulator's folder in the hierarchy: its guests' cgroups are made in it. */
  parent: string;
}

export async function makeFolders(hierarchies: Hierarchy[]): Promise<void> {
  for (const { parent, version, controllers, cpuset } of hierarchies) {
    await mkdir(parent, { recursive: true });
    if (version === 2) await enableControllers(parent, controllers);
    if (cpuset) await copyCpuset(dirname(parent), parent);
  }
}

/** A new v1 cpuset cgroup has no CPUs and memory nodes: it gets its parent's, as a child inherits elsewhere. */
export async function copyCpuset(from: string, to: string): Promise<void> {
  for (const file of ["cpuset.cpus", "cpuset.mems"]) {
    const value = (await readFile(join(from, file), "utf8")).trim();
    // Only while empty: the folder's may already be set by the first guest of an emulator.
    if ((await readFile(join(to, file), "utf8")).trim() === "") await writeFile(join(to, file), value);
  }
}

export async function removeFolders(hierarchies: Hierarchy[]): Promise<void> {
  for (const { parent } of hierarchies) {
    await rmdir(parent).catch(() => undefined);
  }
}

export async function writeIfPresent(path: string, value: string): Promise<boolean> {
  try {
    await writeFile(path, value, { flag: "r+" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

/**
 * Kills what is left in a cgroup and in every cgroup below it (the sandbox leaf, and any the guest
 * made there), then removes them all, the deepest first.
 */
export async function removeCgroup(dir: string, version: 1 | 2): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const tree = await cgroupTree(dir);
    if (tree.length === 0) return;
    const pids = (await Promise.all(tree.map(processesIn))).flatMap((found) => found ?? []);
    if (pids.length === 0) {
      try {
        for (const cgroup of tree) await rmdirIfPresent(cgroup);
        return;
      } catch (error) {
        // EBUSY for a moment after the last process died, until it is reaped.
        if ((error as NodeJS.ErrnoException).code !== "EBUSY" || attempt > 300) throw error;
      }
    } else if (attempt > 300) {
      throw new Error(`${dir} still holds processes ${pids.join(", ")}`);
    } else if (!(version === 2 && (await writeIfPresent(join(dir, "cgroup.kill"), "1")))) {
      // v2's cgroup.kill ends the whole subtree; here each process is signalled instead.
      for (const pid of pids) signalIfRunning(pid, "SIGKILL");
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A cgroup and every cgroup below it, the deepest first; empty when it does not exist. */
async function cgroupTree(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const below: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory()) below.push(...(await cgroupTree(join(dir, entry.name))));
  }
  return [...below, dir];
}

async function rmdirIfPresent(dir: string): Promise<void> {
  try {
    await rmdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** The pids in a cgroup, undefined when it does not exist. */
export async function processesIn(dir: string): Promise<number[] | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, "cgroup.procs"), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((pid) => pid > 0);
}

/** Enables the controllers for a cgroup's children; moves its own processes to a leaf if v2 asks. */
export async function enableControllers(dir: string, controllers: CgroupController[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const enabled = (await readFile(join(dir, "cgroup.subtree_control"), "utf8")).trim().split(/\s+/);
    const missing = controllers.filter((controller) => !enabled.includes(controller));
    if (missing.length === 0) return;
    try {
      await writeFile(join(dir, "cgroup.subtree_control"), missing.map((c) => `+${c}`).join(" "));
      return;
    } catch (error) {
      // EBUSY: the cgroup holds processes itself, which v2 allows only in leaves.
      if ((error as NodeJS.ErrnoException).code !== "EBUSY" || attempt > 20) throw error;
    }
    const leaf = join(dir, processesLeaf);
    await mkdir(leaf, { recursive: true });
    for (const pid of (await processesIn(dir)) ?? []) {
      await writeFile(join(leaf, "cgroup.procs"), String(pid)).catch(() => undefined);
    }
  }
}
