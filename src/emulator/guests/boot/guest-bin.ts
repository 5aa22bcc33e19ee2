// Which of the host's files make up a guest's /usr/bin and /usr/sbin (and /bin and /sbin on hosts
// where those are real directories): the image's commands that the host has, each at the place the
// host has it, symlinks kept as symlinks (with whatever they lead to in those directories), and the
// emulator's own commands (systemctl, the package manager) in place of the host's. guest-setup.py
// mounts them; the host's other commands are not in the guest.
import { lstatSync, readlinkSync, realpathSync, statSync, type Stats } from "node:fs";
import { dirname, join, posix } from "node:path";
import type { GuestImage } from "./images.ts";

/** [path, "file"] | [path, "link", link text] | [path, "emulated", file in the boot directory]. */
export type BinEntry = [string, "file"] | [string, "link", string] | [string, "emulated", string];

export interface BinPlan {
  /** The host's real bin directories, replaced in the guest by a tmpfs holding only the entries. */
  binDirs: string[];
  entries: BinEntry[];
}

const candidateDirs = ["/usr/bin", "/usr/sbin", "/bin", "/sbin"];
/** Commands the emulator provides itself (guest_system/), when the image has them. */
export const emulatedCommands = [
  "systemctl",
  "journalctl",
  "poweroff",
  "shutdown",
  "dnf",
  "dnf5",
  "dnf-3",
  "yum",
  "apt",
  "apt-get",
];

const plans = new WeakMap<GuestImage, BinPlan>();

/** The plan for an image; computed once per image and process (the host's binaries do not change). */
export function binPlanFor(image: GuestImage, emulatedFile: string): BinPlan {
  let plan = plans.get(image);
  if (!plan) {
    plan = computeBinPlan(image, emulatedFile);
    plans.set(image, plan);
  }
  return plan;
}

function realDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

export function computeBinPlan(image: GuestImage, emulatedFile: string): BinPlan {
  const binDirs = candidateDirs.filter(realDirectory);
  const entries = new Map<string, BinEntry>();
  const inBinDirs = (path: string) => binDirs.includes(dirname(path));

  // A command and the symlinks it is reached through; each step that lies in a bin directory is kept.
  const add = (path: string, depth = 0): void => {
    if (entries.has(path) || depth > 16) return;
    const info = lstatOrUndefined(path);
    if (!info) return;
    if (info.isSymbolicLink()) {
      const text = readlinkSync(path);
      entries.set(path, [path, "link", text]);
      const next = posix.resolve(dirname(path), text);
      if (inBinDirs(next)) add(next, depth + 1);
      else followOutside(next, depth + 1);
    } else if (info.isFile()) {
      entries.set(path, [path, "file"]);
    }
  };
  // A link through /etc/alternatives (vi -> /etc/alternatives/vi -> /usr/bin/vim.basic) ends in a bin
  // directory again: that file must be there too.
  const followOutside = (path: string, depth: number): void => {
    let target: string;
    try {
      target = realpathSync(path);
    } catch {
      return;
    }
    if (inBinDirs(target)) add(target, depth);
  };

  for (const name of image.commands) {
    if (name.includes("/") || emulatedCommands.includes(name)) continue;
    for (const dir of binDirs) add(join(dir, name));
  }
  for (const name of emulatedCommands) {
    if (!image.commands.has(name)) continue;
    const path = join(binDirs.find((dir) => entries.has(join(dir, name))) ?? binDirs[0] ?? "/usr/bin", name);
    entries.set(path, [path, "emulated", emulatedFile]);
  }
  return { binDirs, entries: [...entries.values()] };
}

/** The host file a plumbing command is, resolved through symlinks; undefined when the host lacks it. */
export function hostCommand(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(":")) {
    try {
      const path = realpathSync(join(dir, name));
      if (statSync(path).isFile()) return path;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}
