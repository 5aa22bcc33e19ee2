// Each guest in cgroups of its own, so that its processes, memory and CPU time are capped by the
// kernel however it behaves: pids.max, a memory limit without swap, and a CPU quota. Works on cgroup
// v2 (pure, as systemd hosts have it) and on v1 or hybrid layouts (each controller wherever it is
// mounted), as root or as an ordinary user with a delegated v2 cgroup. Layout, per hierarchy:
//
//   v1, any user:     <the emulator's own cgroup>/lab-emulator-<pid>/<guest>/sandbox
//   v2, root:         <the hierarchy's root>/lab-emulator-<pid>/<guest>/sandbox (as Docker's cgroupfs)
//   v2, not root:     <the emulator's own, delegated cgroup>/lab-emulator-<pid>/<guest>/sandbox, after
//                     the processes in that cgroup moved to .../lab-emulator-processes (v2 lets only
//                     leaves hold processes once controllers are enabled for children)
//
// The limits are written in <guest>, the guest's processes are in <guest>/sandbox. The sandbox makes
// a cgroup namespace, whose root is the cgroup its first process is in: guest root may mount cgroupfs
// in a user namespace of its own and write whatever that shows, so the limits must sit above it, where
// no mount inside can reach. A limit holds every cgroup below it (v1 memory with use_hierarchy, always
// on since Linux 5.x and set here where older kernels ask), so what the guest does in its own subtree
// changes nothing. On v2 <guest> holds no process itself, which its controllers require.
//
// Every other hierarchy the emulator is in (v1 freezer, cpuset, blkio, name=systemd, the empty v2
// one of a hybrid host, ...) gets the same <guest>/sandbox, without limits: otherwise the guest's
// namespace root there is the emulator's own cgroup, whose root-owned files guest root could write
// (freezer.state FROZEN stops the emulator and every guest). As root these are required; without root
// they are used where the emulator's cgroup is writable, and left alone where the guest could not
// write them either.
//
// A guest's first process joins its cgroups before it runs anything (`wrap`), so everything it ever
// forks is counted. When the guest ends its cgroups, with any the guest made below them, are emptied
// (cgroup.kill, or SIGKILL to what is left) and removed; the emulator's folder goes with its last
// guest, or, if the emulator died, when the next emulator starts.
import { access, constants, mkdir, readFile, readdir, rmdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { cgroupMemoryBytes, UNLIMITED_GUESTS_ENV, type GuestLimits } from "./guest-limits.ts";
import { isAlive, signalIfRunning } from "./host-signals.ts";

export type CgroupController = "pids" | "memory" | "cpu";
const wanted: readonly CgroupController[] = ["pids", "memory", "cpu"];

interface Hierarchy {
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

export interface CgroupSetup {
  hierarchies: Hierarchy[];
  /** What keeps a guest from its process or memory limit here: guests are refused while there is any. */
  problems: string[];
  /**
   * What keeps a guest from its CPU quota here. Guests still start: one without it can slow the
   * host down, but not exhaust it as processes or memory would.
   */
  warnings: string[];
}

export interface GuestCgroup {
  /** The launch command wrapped so that its process joins the guest's cgroups before it runs. */
  wrap(file: string, args: string[]): [string, string[]];
  /** Kills whatever is left in the cgroups and removes them. */
  remove(): Promise<void>;
}

const emulatorFolder = /^lab-emulator-(\d+)$/;
const processesLeaf = "lab-emulator-processes";
/** The guest's processes' cgroup, below the one with its limits: the root of its cgroup namespace. */
const sandboxLeaf = "sandbox";
const periodUs = 100_000;

let detected: Promise<CgroupSetup> | undefined;
/** Guest cgroups of this process: the emulator's folders stay while there are any. */
let live = 0;
let folderWork: Promise<unknown> = Promise.resolve();

/** Runs changes to the emulator's folders one at a time, so none is removed while a guest's is made. */
function serially<T>(work: () => Promise<T>): Promise<T> {
  const next = folderWork.then(work);
  folderWork = next.catch(() => undefined);
  return next;
}

/** Finds the cgroup hierarchies and makes this emulator's folders in them, once per process. */
export function guestCgroupSetup(): Promise<CgroupSetup> {
  detected ??= detect();
  return detected;
}

/** For the operator at start-up: guests start here, but without a CPU quota. */
export function cgroupWarning(setup: CgroupSetup): string | undefined {
  if (setup.warnings.length === 0) return undefined;
  return [
    "Guests get no CPU quota on this host; they start anyway, since a busy guest slows the host down but cannot exhaust it:",
    ...setup.warnings.map((warning) => `- ${warning}`),
  ].join("\n");
}

/** One line for the operator: how guests are limited here. */
export function describeCgroupSetup(setup: CgroupSetup): string {
  const places = setup.hierarchies.map(
    (hierarchy) => `cgroup v${hierarchy.version} ${hierarchy.label} in ${hierarchy.parent}`,
  );
  return places.length > 0 ? places.join("; ") : "none";
}

/** Why a guest is refused here, and how to accept it anyway. */
export function cgroupRefusal(setup: CgroupSetup): string {
  return [
    "Guests cannot be held to their process and memory limits on this host:",
    ...setup.problems.map((problem) => `- ${problem}`),
    `Set ${UNLIMITED_GUESTS_ENV}=1 to start them anyway, with whatever limits remain: only for guests you trust, since one could then fork or allocate until the host runs out.`,
  ].join("\n");
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

async function makeFolders(hierarchies: Hierarchy[]): Promise<void> {
  for (const { parent, version, controllers, cpuset } of hierarchies) {
    await mkdir(parent, { recursive: true });
    if (version === 2) await enableControllers(parent, controllers);
    if (cpuset) await copyCpuset(dirname(parent), parent);
  }
}

/** A new v1 cpuset cgroup has no CPUs and memory nodes: it gets its parent's, as a child inherits elsewhere. */
async function copyCpuset(from: string, to: string): Promise<void> {
  for (const file of ["cpuset.cpus", "cpuset.mems"]) {
    const value = (await readFile(join(from, file), "utf8")).trim();
    // Only while empty: the folder's may already be set by the first guest of an emulator.
    if ((await readFile(join(to, file), "utf8")).trim() === "") await writeFile(join(to, file), value);
  }
}

async function removeFolders(hierarchies: Hierarchy[]): Promise<void> {
  for (const { parent } of hierarchies) {
    await rmdir(parent).catch(() => undefined);
  }
}

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

async function writeIfPresent(path: string, value: string): Promise<boolean> {
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
async function removeCgroup(dir: string, version: 1 | 2): Promise<void> {
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
async function processesIn(dir: string): Promise<number[] | undefined> {
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

interface CgroupMount {
  version: 1 | 2;
  mountPoint: string;
  /** The cgroup the mount shows at its mount point (mountinfo's root field). */
  root: string;
  controllers: string[];
}

interface Membership {
  /** Empty for the v2 hierarchy. */
  controllers: string[];
  path: string;
}

async function detect(): Promise<CgroupSetup> {
  if (process.platform !== "linux") {
    return {
      hierarchies: [],
      problems: [`cgroups are Linux's, and this host is ${process.platform}`],
      warnings: [],
    };
  }
  const uid = process.getuid?.() ?? -1;
  const privileged = uid === 0;
  let mounts: CgroupMount[];
  let memberships: Membership[];
  try {
    [mounts, memberships] = await Promise.all([cgroupMounts(), ownCgroups()]);
  } catch (error) {
    return {
      hierarchies: [],
      problems: [`the cgroups of this process are unknown: ${(error as Error).message}`],
      warnings: [],
    };
  }
  const problems: string[] = [];
  const warnings: string[] = [];
  // Only pids and memory keep a guest from exhausting the host: a missing cpu is a warning.
  const report = (controllers: readonly CgroupController[], message: string) =>
    (controllers.every((controller) => controller === "cpu") ? warnings : problems).push(message);
  const groups = new Map<CgroupMount, CgroupController[]>();
  const v2 = mounts.find((mount) => mount.version === 2);
  const v2Available = v2 ? await controllersOf(v2.mountPoint) : [];
  for (const controller of wanted) {
    const mount =
      mounts.find((m) => m.version === 1 && m.controllers.includes(controller)) ??
      (v2 && v2Available.includes(controller) ? v2 : undefined);
    if (!mount) {
      report(
        [controller],
        `the ${controller} controller is neither mounted (cgroup v1) nor available (cgroup v2)`,
      );
      continue;
    }
    groups.set(mount, [...(groups.get(mount) ?? []), controller]);
  }
  const hierarchies: Hierarchy[] = [];
  /** The hierarchies (lines of /proc/self/cgroup) that have their place already. */
  const used = new Set<Membership>();
  for (const [mount, controllers] of groups) {
    const membership = memberships.find((m) =>
      mount.version === 2 ? m.controllers.length === 0 : controllers.every((c) => m.controllers.includes(c)),
    );
    if (membership) used.add(membership);
    const own = membership && dirOf(mount, membership.path);
    const what = `cgroup v${mount.version} (${controllers.join(", ")})`;
    if (own === undefined) {
      report(controllers, `${what}: this process's cgroup is not under ${mount.mountPoint}`);
      continue;
    }
    try {
      if (mount.version === 1 && !privileged && !(await writable(own))) {
        throw new Error(`the emulator's cgroup ${own} is not writable by uid ${uid}`);
      }
      let usable = controllers;
      const base = mount.version === 1 ? own : await v2Base(mount, own, privileged, uid);
      if (mount.version === 2) {
        // What the parent does not give this cgroup is missing; the rest is still used.
        const available = await controllersOf(base);
        usable = controllers.filter((controller) => available.includes(controller));
        for (const controller of controllers.filter((c) => !usable.includes(c))) {
          report([controller], `${what}: ${base} is given no ${controller} controller by its parent`);
        }
        if (usable.length === 0) continue;
        await enableControllers(base, usable);
      }
      const hierarchy: Hierarchy = {
        version: mount.version,
        controllers: usable,
        label: usable.join(", "),
        cpuset: false,
        parent: join(base, `lab-emulator-${process.pid}`),
      };
      await prepare(hierarchy, base);
      hierarchies.push(hierarchy);
    } catch (error) {
      report(controllers, `${what}: ${(error as Error).message}`);
    }
  }
  for (const mount of mounts) {
    const membership = memberships.find((m) =>
      mount.version === 2
        ? m.controllers.length === 0
        : m.controllers.length > 0 && m.controllers.every((c) => mount.controllers.includes(c)),
    );
    // A hierarchy mounted twice (a bind mount) has one line, and one place.
    if (!membership || used.has(membership)) continue;
    used.add(membership);
    const own = dirOf(mount, membership.path);
    if (own === undefined) continue;
    const label = mount.version === 2 ? "(no controllers)" : membership.controllers.join(", ");
    try {
      // Without root the guest can write only what its own uid may; a cgroup the emulator cannot
      // write is one the guest cannot either.
      if (!privileged && !(await writable(own))) continue;
      const base = mount.version === 2 && privileged ? mount.mountPoint : own;
      const hierarchy: Hierarchy = {
        version: mount.version,
        controllers: [],
        label,
        cpuset: mount.version === 1 && mount.controllers.includes("cpuset"),
        parent: join(base, `lab-emulator-${process.pid}`),
      };
      await prepare(hierarchy, base);
      hierarchies.push(hierarchy);
    } catch (error) {
      const message = `cgroup v${mount.version} ${label}: ${(error as Error).message}`;
      // As root the guest would stay in the emulator's own cgroup there and could freeze it.
      if (privileged) problems.push(`${message}; guest root could write the emulator's own cgroup there`);
    }
  }
  return { hierarchies, problems, warnings };
}

/** Sweeps the folders of emulators that are gone, and learns whether this one's can be made. */
async function prepare(hierarchy: Hierarchy, base: string): Promise<void> {
  await removeStaleFolders(base, hierarchy.version);
  // Made now to learn whether it can be; removed again until the first guest needs it.
  await makeFolders([hierarchy]);
  await removeFolders([hierarchy]);
}

/**
 * Where this emulator's folder goes in the v2 hierarchy. Root takes the hierarchy's root; anyone
 * else needs its own cgroup delegated to it (the parent of the leaf its processes moved to, once).
 */
async function v2Base(mount: CgroupMount, own: string, privileged: boolean, uid: number): Promise<string> {
  if (privileged) return mount.mountPoint;
  const base = own.endsWith(`/${processesLeaf}`) ? own.slice(0, -processesLeaf.length - 1) : own;
  for (const path of [base, join(base, "cgroup.procs"), join(base, "cgroup.subtree_control")]) {
    if (await writable(path)) continue;
    throw new Error(
      `the emulator's cgroup ${base} is not delegated to uid ${uid}; start it in one that is, e.g. systemd-run --user --scope -p Delegate=yes -- npm start`,
    );
  }
  return base;
}

/** Enables the controllers for a cgroup's children; moves its own processes to a leaf if v2 asks. */
async function enableControllers(dir: string, controllers: CgroupController[]): Promise<void> {
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

/** Folders of emulators that are gone (their guests died with them): removed with what is left. */
async function removeStaleFolders(base: string, version: 1 | 2): Promise<void> {
  let names: string[];
  try {
    names = await readdir(base);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(emulatorFolder.exec(name)?.[1] ?? "0");
    if (pid === 0 || pid === process.pid || isAlive(pid)) continue;
    try {
      await removeCgroup(join(base, name), version);
    } catch {
      // another emulator may be sweeping it at the same time
    }
  }
}

async function writable(path: string): Promise<boolean> {
  try {
    await access(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

async function controllersOf(dir: string): Promise<string[]> {
  try {
    return (await readFile(join(dir, "cgroup.controllers"), "utf8")).trim().split(/\s+/);
  } catch {
    return [];
  }
}

/** The directory of a cgroup path (as /proc/self/cgroup names it) under a mount, if it shows it. */
function dirOf(mount: CgroupMount, path: string): string | undefined {
  const root = mount.root === "/" ? "" : mount.root;
  if (path !== root && !path.startsWith(`${root}/`)) return undefined;
  const relative = path.slice(root.length);
  return relative === "" || relative === "/" ? mount.mountPoint : join(mount.mountPoint, relative);
}

async function cgroupMounts(): Promise<CgroupMount[]> {
  const text = await readFile("/proc/self/mountinfo", "utf8");
  const mounts: CgroupMount[] = [];
  for (const line of text.split("\n")) {
    const separator = line.indexOf(" - ");
    if (separator < 0) continue;
    const fields = line.slice(0, separator).split(" ");
    const [fsType = "", , superOptions = ""] = line.slice(separator + 3).split(" ");
    if (fsType !== "cgroup" && fsType !== "cgroup2") continue;
    mounts.push({
      version: fsType === "cgroup2" ? 2 : 1,
      root: unescapeMountField(fields[3] ?? "/"),
      mountPoint: unescapeMountField(fields[4] ?? ""),
      controllers: fsType === "cgroup2" ? [] : superOptions.split(","),
    });
  }
  return mounts;
}

// mountinfo writes space, tab, newline and backslash as octal escapes.
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

async function ownCgroups(): Promise<Membership[]> {
  const text = await readFile("/proc/self/cgroup", "utf8");
  const memberships: Membership[] = [];
  for (const line of text.split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    memberships.push({ controllers: match[1] ? match[1].split(",") : [], path: match[2] ?? "/" });
  }
  return memberships;
}
