// Each guest in cgroups of its own, so that its processes, memory and CPU time are capped by the
// kernel however it behaves: pids.max, a memory limit without swap, and a CPU quota, in the
// hierarchies cgroup-setup.ts found, as <the emulator's folder>/<guest>/sandbox in each.
//
// The limits are written in <guest>, the guest's processes are in <guest>/sandbox. The sandbox makes
// a cgroup namespace, whose root is the cgroup its first process is in: guest root may mount cgroupfs
// in a user namespace of its own and write whatever that shows, so the limits must sit above it, where
// no mount inside can reach. A limit holds every cgroup below it (v1 memory with use_hierarchy, always
// on since Linux 5.x and set here where older kernels ask), so what the guest does in its own subtree
// changes nothing. On v2 <guest> holds no process itself, which its controllers require.
//
// The hierarchies without limits get the same <guest>/sandbox: otherwise the guest's namespace root
// there is the emulator's own cgroup, whose root-owned files guest root could write (freezer.state
// FROZEN stops the emulator and every guest).
//
// A guest's first process joins its cgroups before it runs anything (`wrap`), so everything it ever
// forks is counted. When the guest ends its cgroups, with any the guest made below them, are emptied
// (cgroup.kill, or SIGKILL to what is left) and removed; the emulator's folder goes with its last
// guest, or, if the emulator died, when the next emulator starts.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CgroupSetup } from "./cgroup-setup.ts";
import {
  copyCpuset,
  makeFolders,
  removeCgroup,
  removeFolders,
  writeIfPresent,
  type CgroupController,
} from "./cgroupfs.ts";
import { cgroupMemoryBytes, type GuestLimits } from "./guest-limits.ts";

export interface GuestCgroup {
  /** The launch command wrapped so that its process joins the guest's cgroups before it runs. */
  wrap(file: string, args: string[]): [string, string[]];
  /** Kills whatever is left in the cgroups and removes them. */
  remove(): Promise<void>;
}

/** The guest's processes' cgroup, below the one with its limits: the root of its cgroup namespace. */
const sandboxLeaf = "sandbox";
const periodUs = 100_000;

/** Guest cgroups of this process: the emulator's folders stay while there are any. */
let live = 0;
let folderWork: Promise<unknown> = Promise.resolve();

/** Runs changes to the emulator's folders one at a time, so none is removed while a guest's is made. */
function serially<T>(work: () => Promise<T>): Promise<T> {
  const next = folderWork.then(work);
  folderWork = next.catch(() => undefined);
  return next;
}

export async function createGuestCgroup(
  setup: CgroupSetup,
  name: string,
  limits: GuestLimits,
): Promise<GuestCgroup> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name))
    throw new Error(`${JSON.stringify(name)} is no cgroup name`);
  const made: { dir: string; version: 1 | 2 }[] = [];
  let counted = true;
  const remove = async () => {
    try {
      for (const { dir, version } of made.splice(0)) await removeCgroup(dir, version);
    } finally {
      if (counted) {
        counted = false;
        await serially(async () => {
          if (--live === 0) await removeFolders(setup.hierarchies);
        });
      }
    }
  };
  try {
    await serially(async () => {
      if (++live === 1) await makeFolders(setup.hierarchies);
    });
    for (const hierarchy of setup.hierarchies) {
      const dir = join(hierarchy.parent, name);
      await mkdir(dir);
      made.push({ dir, version: hierarchy.version });
      for (const controller of hierarchy.controllers) {
        await writeLimits(dir, hierarchy.version, controller, limits);
      }
      if (hierarchy.cpuset) await copyCpuset(hierarchy.parent, dir);
      // After the limits: older kernels take v1's use_hierarchy only while a cgroup has no children.
      await mkdir(join(dir, sandboxLeaf));
      if (hierarchy.cpuset) await copyCpuset(dir, join(dir, sandboxLeaf));
    }
  } catch (error) {
    await remove().catch(() => undefined);
    throw new Error(`the guest's cgroup could not be made: ${(error as Error).message}`);
  }
  const procs = made.map(({ dir }) => join(dir, sandboxLeaf, "cgroup.procs"));
  return {
    wrap: (file, args) =>
      procs.length === 0
        ? [file, args]
        : ["/bin/sh", ["-c", joinScript, "lab-guest-cgroup", ...procs, "--", file, ...args]],
    remove,
  };
}

// The shell writes its own pid into each cgroup.procs, then becomes the launcher: the same process,
// so the launcher and all it forks are in the guest's cgroups from their first instruction, and the
// cgroup namespace the launcher makes has the sandbox leaf as its root.
const joinScript = `for f do
  [ "$f" = -- ] && break
  echo $$ > "$f" || exit 125
  shift
done
shift
exec "$@"`;

async function writeLimits(
  dir: string,
  version: 1 | 2,
  controller: CgroupController,
  limits: GuestLimits,
): Promise<void> {
  const memory = String(cgroupMemoryBytes(limits));
  const quota = String(Math.max(1000, Math.round((limits.cpuMillicores * periodUs) / 1000)));
  const write = (file: string, value: string) => writeFile(join(dir, file), value);
  switch (controller) {
    case "pids":
      return write("pids.max", String(limits.pids));
    case "memory":
      // No swap either: what the guest cannot keep in memory is its own problem (the OOM killer
      // picks its biggest process, not the emulator's).
      if (version === 2) {
        await write("memory.max", memory);
        await writeIfPresent(join(dir, "memory.swap.max"), "0");
      } else {
        // The limit must hold the sandbox leaf below; 1 is the only value Linux 5.x+ has, and older
        // kernels take it from a cgroup without children.
        await writeIfPresent(join(dir, "memory.use_hierarchy"), "1");
        await write("memory.limit_in_bytes", memory);
        await writeIfPresent(join(dir, "memory.memsw.limit_in_bytes"), memory);
      }
      return;
    case "cpu":
      if (version === 2) return write("cpu.max", `${quota} ${periodUs}`);
      await write("cpu.cfs_period_us", String(periodUs));
      return write("cpu.cfs_quota_us", quota);
  }
}
