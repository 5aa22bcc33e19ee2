// Builds the command line that puts a guest in its own sandbox: new mount, pid, network (loopback only),
// uts, ipc and cgroup namespaces; the host's system directories read-only; only the guest's own home and
// /tmp writable (guest-setup.py then gives the guest its own /etc, /usr/local, /var and /root,
// in memory). Two backends do the same job: bubblewrap, and util-linux `unshare` plus a setup script
// for hosts without bubblewrap. The guest's processes never run as root on the host:
// - privileged (the emulator runs as root): no user namespace; the sandbox's first process is root inside
//   the namespaces and must drop to the guest's own uid (guest-uids.ts) itself (see `asUser`).
// - unprivileged: a user namespace maps GUEST_UID to the emulator's own uid; everything runs as that uid.
//
// Finding which backend works on the host is sandbox-support.ts's job.
import { lstatSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { shellQuote } from "../shell-quote.ts";

export type SandboxBackend = "bwrap" | "unshare";

/** The guest user's uid inside a user namespace (without root); as root each guest has a uid of its own. */
export const GUEST_UID = 1000;
/** The uid the port relay (port-relay.py) drops to when the emulator runs as root: `nobody`. */
export const RELAY_UID = 65534;

/** PATH inside the sandbox; also what the setup script and the probes run with. */
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The console's terminal as a real guest names it (its getty's, and the grading agent's --tty). */
export const consoleDevice = "/dev/ttyS0";
/** What it is in the sandbox: the pty the console loop holds from boot to power-off. */
const consolePty = "pts/0";
/** tty1, the VGA console, when the student has a shell there: the sandbox's second pty (boot-files.ts). */
const tty1Device = "/dev/tty1";
const tty1Pty = "pts/1";

export interface SandboxMount {
  hostPath: string;
  guestPath: string;
}

export interface SandboxPlan {
  hostname: string;
  /** Directories created empty (mode 0755) on the sandbox's read-only root, e.g. /home. */
  directories: string[];
  /** The guest's own directories (home, /tmp): the only host paths it can write. */
  writable: SandboxMount[];
  /**
   * Extra host files or directories mounted read-only, after everything else. A target inside a
   * read-only mount (e.g. /etc/passwd) must already exist there; others are created (e.g. under /run).
   */
  readOnly: SandboxMount[];
  workDir: string;
  /** An empty host directory; the unshare backend mounts the new root on it (inside its own mount namespace). */
  rootMountPoint: string;
  command: string[];
  /**
   * Run `command` as the sandbox's root (the user namespace's, when unprivileged) instead of dropping
   * to GUEST_UID first; the command then drops by itself. Not with bubblewrap unprivileged, which
   * keeps no capabilities for its command.
   */
  commandRunsAsRoot?: boolean;
  /** The student has a shell on tty1 (boot-files.ts tty1Script): /dev/tty1 names its pty. */
  tty1?: boolean;
}

export interface SandboxLaunch {
  file: string;
  args: string[];
}

export function runsPrivileged(): boolean {
  return process.getuid?.() === 0;
}

/** Prefix for a command that must run as `uid` inside the sandbox. Empty when unprivileged: all is that uid already. */
export function asUser(uid: number, privileged: boolean): string[] {
  if (!privileged) return [];
  return [
    "setpriv",
    `--reuid=${uid}`,
    `--regid=${uid}`,
    "--clear-groups",
    "--no-new-privs",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--",
  ];
}

export function sandboxLaunch(
  plan: SandboxPlan,
  backend: SandboxBackend,
  privileged: boolean,
): SandboxLaunch {
  if (plan.commandRunsAsRoot && backend === "bwrap" && !privileged) {
    throw new Error("bubblewrap without root cannot run a command as the sandbox's root; use unshare");
  }
  const steps = mountSteps(plan);
  return backend === "bwrap"
    ? { file: "bwrap", args: bwrapArgs(plan, steps, privileged) }
    : // unshare has no --die-with-parent: setpriv gives it a parent-death signal before it starts.
      {
        file: "setpriv",
        args: ["--pdeathsig", "KILL", "--", "unshare", ...unshareArgs(plan, steps, privileged)],
      };
}

type MountStep =
  | { kind: "ro-bind"; source: string; target: string; isDirectory: boolean }
  | { kind: "bind"; source: string; target: string }
  | { kind: "symlink"; linkText: string; path: string }
  | { kind: "dir"; path: string }
  | { kind: "tmpfs"; path: string }
  | { kind: "proc"; path: string }
  | { kind: "dev"; path: string };

function mountSteps(plan: SandboxPlan): MountStep[] {
  return [
    ...hostSystemSteps(),
    ...hostEtcSteps(),
    { kind: "dev", path: "/dev" },
    // A real guest's console is its serial port; here it is the first pty of the sandbox's own devpts,
    // which the console opens before anything else does (boot-files.ts consoleScript).
    { kind: "symlink", linkText: consolePty, path: consoleDevice },
    // Only where tty1's shell takes the second pty: elsewhere that could be any program's.
    ...(plan.tty1 === true ? [{ kind: "symlink", linkText: tty1Pty, path: tty1Device } as const] : []),
    { kind: "proc", path: "/proc" },
    { kind: "tmpfs", path: "/run" },
    { kind: "dir", path: "/var" },
    { kind: "symlink", linkText: "../tmp", path: "/var/tmp" },
    ...plan.directories.map((path): MountStep => ({ kind: "dir", path })),
    ...plan.writable.map((m): MountStep => ({ kind: "bind", source: m.hostPath, target: m.guestPath })),
    ...plan.readOnly.map((m): MountStep => ({
      kind: "ro-bind",
      source: m.hostPath,
      target: m.guestPath,
      isDirectory: statSync(m.hostPath).isDirectory(),
    })),
  ];
}

// The operating system, not the host's data: no /home, /root, /run, /var, /srv, /opt, /work or /tmp,
// and of /etc only hostEtcEntries.
const systemEntries = ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/**
 * What a guest gets of the host's /etc (guest-setup.py copies it into the guest's own /etc): what
 * programs read to run, i.e. the dynamic linker's cache and configuration, the name service switch,
 * the shells' start-up files, the alternatives commands lead through, service and protocol names, the
 * time zone, terminal data, the distribution's release files, Debian's python3 configuration and the
 * defaults of the images' vim, nano, man and ip. Never the host's users (the guest has its own), keys,
 * certificates (a guest has no network to use them on) or anything else an operator put in /etc: run
 * by an ordinary user, a guest is that user and could read all of it. Entries the host lacks, or that
 * others may not read, are left out.
 */
export const hostEtcEntries: readonly string[] = [
  "alternatives",
  "bash.bashrc",
  "debian_version",
  "inputrc",
  "iproute2",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "lsb-release",
  "man_db.conf",
  "manpath.config",
  "mtab",
  "nanorc",
  "nsswitch.conf",
  "os-release",
  "profile",
  "profile.d",
  "protocols",
  "python3",
  "redhat-release",
  "services",
  "shells",
  "ssl/openssl.cnf",
  "system-release",
  "terminfo",
  "timezone",
  "vim",
];
/** Debian's /etc/python3.N, beside python3. */
const hostEtcPattern = /^python3\.\d+$/;

function hostSystemSteps(): MountStep[] {
  return systemEntries.flatMap((entry) => hostEntryStep(`/${entry}`, "any"));
}

function hostEtcSteps(): MountStep[] {
  let patterned: string[];
  try {
    patterned = readdirSync("/etc").filter((name) => hostEtcPattern.test(name));
  } catch {
    patterned = [];
  }
  const names = [...hostEtcEntries, ...patterned];
  const parents = [...new Set(names.filter((name) => name.includes("/")).map((name) => dirname(name)))];
  return [
    { kind: "dir", path: "/etc" },
    ...parents.map((parent): MountStep => ({ kind: "dir", path: `/etc/${parent}` })),
    ...names.flatMap((name) => hostEntryStep(`/etc/${name}`, "others may read")),
  ];
}

/** The host path as the same path in the guest: a link as that link, else bound read-only. */
function hostEntryStep(path: string, readers: "any" | "others may read"): MountStep[] {
  let info;
  try {
    info = lstatSync(path);
  } catch {
    return [];
  }
  if (info.isSymbolicLink()) return [{ kind: "symlink", linkText: readlinkSync(path), path }];
  const isDirectory = info.isDirectory();
  if (!isDirectory && !info.isFile()) return [];
  const othersMay = isDirectory ? (info.mode & 0o005) === 0o005 : (info.mode & 0o004) !== 0;
  if (readers === "others may read" && !othersMay) return [];
  return [{ kind: "ro-bind", source: path, target: path, isDirectory }];
}

/**
 * The host's files and folders every guest sees, read-only (whatever a guest adds for itself, its
 * disk and boot files, aside): nothing secret may lie in any of them (sandbox-guests.ts checks).
 */
export function guestVisibleHostPaths(): string[] {
  return [...hostSystemSteps(), ...hostEtcSteps()].flatMap((step) =>
    step.kind === "ro-bind" ? [step.source] : [],
  );
}

function bwrapArgs(plan: SandboxPlan, steps: MountStep[], privileged: boolean): string[] {
  const args = [
    "--die-with-parent",
    // Without its own session the guest could open /dev/tty of the emulator's terminal and inject input.
    "--new-session",
    "--unshare-pid",
    // The guest's own first process is its pid 1, as on a VM (and in the unshare backend): bwrap's own
    // reaper would be pid 1 inside, showing the guest bwrap's whole command line, host paths included.
    "--as-pid-1",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-ipc",
    "--unshare-cgroup-try",
  ];
  if (!privileged) {
    args.push("--unshare-user", "--uid", `${GUEST_UID}`, "--gid", `${GUEST_UID}`, "--disable-userns");
  }
  args.push("--hostname", plan.hostname);
  for (const step of steps) {
    switch (step.kind) {
      case "ro-bind":
        args.push("--ro-bind", step.source, step.target);
        break;
      case "bind":
        args.push("--bind", step.source, step.target);
        break;
      case "symlink":
        args.push("--symlink", step.linkText, step.path);
        break;
      case "dir":
        args.push("--perms", "0755", "--dir", step.path);
        break;
      case "tmpfs":
        args.push("--tmpfs", step.path);
        break;
      case "proc":
        args.push("--proc", step.path);
        break;
      case "dev":
        args.push("--dev", step.path);
        break;
    }
  }
  args.push("--remount-ro", "/", "--chdir", plan.workDir, "--", ...plan.command);
  return args;
}

function unshareArgs(plan: SandboxPlan, steps: MountStep[], privileged: boolean): string[] {
  const namespaces = ["--mount", "--uts", "--ipc", "--net", "--pid", "--cgroup"];
  const user = privileged ? [] : ["--user", "--map-root-user"];
  return [
    ...user,
    ...namespaces,
    "--fork",
    "--kill-child",
    "--propagation",
    "private",
    "--",
    "/bin/sh",
    "-c",
    unshareSetupScript(plan, steps, privileged),
    "lab-guest-setup",
    ...plan.command,
  ];
}

const deviceNodes = ["null", "zero", "full", "random", "urandom", "tty"];

// Runs as root of the new namespaces (real root when privileged, else root of a user namespace), builds
// the guest's root on a tmpfs, pivots into it and starts the command. pivot_root, not chroot: a guest
// that makes its own user namespace could climb out of a chroot.
function unshareSetupScript(plan: SandboxPlan, steps: MountStep[], privileged: boolean): string {
  const root = (path: string) => shellQuote(`${plan.rootMountPoint}${path}`);
  const lines = [
    "set -e",
    // Bind mounts keep their submounts (rbind is required inside a user namespace); make them all read-only.
    `lab_ro() { findmnt -n -l -R -o TARGET -- "$1" | while IFS= read -r m; do mount -o remount,bind,ro -- "$m"; done; }`,
    `mount -t tmpfs -o mode=0755 lab-guest-root ${root("")}`,
  ];
  for (const step of steps) {
    switch (step.kind) {
      case "ro-bind": {
        const target = root(step.target);
        lines.push(
          step.isDirectory
            ? `[ -e ${target} ] || mkdir -p ${target}`
            : `[ -e ${target} ] || { mkdir -p "$(dirname ${target})"; touch ${target}; }`,
          `mount --rbind -- ${shellQuote(step.source)} ${target}`,
          `lab_ro ${target}`,
        );
        break;
      }
      case "bind":
        lines.push(
          `mkdir -p ${root(step.target)}`,
          `mount --bind -- ${shellQuote(step.source)} ${root(step.target)}`,
        );
        break;
      case "symlink":
        lines.push(`ln -s -- ${shellQuote(step.linkText)} ${root(step.path)}`);
        break;
      case "dir":
        lines.push(`mkdir -p -m 0755 ${root(step.path)}`);
        break;
      case "tmpfs":
        lines.push(
          `mkdir -p ${root(step.path)}`,
          `mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs ${root(step.path)}`,
        );
        break;
      case "proc":
        lines.push(
          `mkdir -p ${root(step.path)}`,
          `mount -t proc -o nosuid,nodev,noexec proc ${root(step.path)}`,
        );
        break;
      case "dev":
        lines.push(...devSetup(root(step.path)));
        break;
    }
  }
  const dropToGuest =
    privileged || plan.commandRunsAsRoot
      ? []
      : ["unshare", "--user", `--map-user=${GUEST_UID}`, `--map-group=${GUEST_UID}`, "--"];
  lines.push(
    `hostname ${shellQuote(plan.hostname)}`,
    // A new network namespace starts with its loopback down (bwrap brings it up by itself).
    "ip link set dev lo up",
    `cd ${root("")}`,
    "mkdir .old-root",
    "pivot_root . .old-root",
    "umount -l /.old-root",
    "rmdir /.old-root",
    "mount -o remount,bind,ro /",
    `cd ${shellQuote(plan.workDir)}`,
    `exec ${dropToGuest.map(shellQuote).join(" ")} "$@"`,
  );
  return lines.join("\n");
}

function devSetup(dev: string): string[] {
  return [
    `mkdir -p ${dev}`,
    `mount -t tmpfs -o mode=0755,nosuid tmpfs ${dev}`,
    ...deviceNodes.flatMap((node) => [`touch ${dev}/${node}`, `mount --bind /dev/${node} ${dev}/${node}`]),
    `mkdir ${dev}/pts ${dev}/shm`,
    `chmod 1777 ${dev}/shm`,
    `mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts ${dev}/pts`,
    `ln -s pts/ptmx ${dev}/ptmx`,
    `ln -s /proc/self/fd ${dev}/fd`,
    `ln -s /proc/self/fd/0 ${dev}/stdin`,
    `ln -s /proc/self/fd/1 ${dev}/stdout`,
    `ln -s /proc/self/fd/2 ${dev}/stderr`,
  ];
}
