// Where guests' cgroups can go on this host, found once at start: each of the pids, memory and cpu
// controllers wherever the host mounts it, on cgroup v2 (pure, as systemd hosts have it) and on v1 or
// hybrid layouts, as root or as an ordinary user with a delegated v2 cgroup, and where this emulator's
// folder goes in each hierarchy:
//
//   v1, any user:     <the emulator's own cgroup>/lab-emulator-<pid>
//   v2, root:         <the hierarchy's root>/lab-emulator-<pid> (as Docker's cgroupfs)
//   v2, not root:     <the emulator's own, delegated cgroup>/lab-emulator-<pid>, after the processes
//                     in that cgroup moved to .../lab-emulator-processes (v2 lets only leaves hold
//                     processes once controllers are enabled for children)
//
// Every other hierarchy the emulator is in (v1 freezer, cpuset, blkio, name=systemd, the empty v2
// one of a hybrid host, ...) gets a folder too, for cgroups without limits (guest-cgroups.ts says
// why). As root these are required; without root they are used where the emulator's cgroup is
// writable, and left alone where the guest could not write them either. What is missing is said:
// as a problem, which refuses guests, for pids and memory; as a warning for cpu.
import { access, constants, readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import {
  enableControllers,
  makeFolders,
  processesLeaf,
  removeCgroup,
  removeFolders,
  type CgroupController,
  type Hierarchy,
} from "./cgroupfs.ts";
import { UNLIMITED_GUESTS_ENV } from "./guest-limits.ts";
import { isAlive } from "../host-signals.ts";

const wanted: readonly CgroupController[] = ["pids", "memory", "cpu"];
const emulatorFolder = /^lab-emulator-(\d+)$/;

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

let detected: Promise<CgroupSetup> | undefined;

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
