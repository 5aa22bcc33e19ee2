// The files a guest boots from, generated per guest and mounted read-only at BOOT_DIR: the init script,
// the console loop, the plans guest_system/ follows (setup.json as the sandbox's root, boot.json as
// guest root), the /etc files that name the guest and its user, and cloud-init's scripts and
// write_files contents. Pure: guest.ts writes them to disk.
//
// Everything a guest's own root could read on a real guest only (the user data, the files it writes,
// shadow) is under PRIVATE_DIR, which only root may enter; the guest user reads none of it.
import { fileURLToPath } from "node:url";
import type { BinPlan } from "./guest-bin.ts";
import type { CloudConfig } from "./cloud-init.ts";
import type { GuestImage } from "./images.ts";
import { GUEST_UID, RELAY_UID } from "../isolation/sandbox.ts";
import { consoleScript, tty1Script } from "./console-scripts.ts";
import { shellJoin, shellQuote } from "../shell-quote.ts";

export const BOOT_DIR = "/run/lab-guest";
/** Host binaries the emulator's own scripts run (never the guest's PATH): mount points in the boot dir. */
export const PLUMBING_DIR = `${BOOT_DIR}/bin`;
export const plumbingCommands = ["setpriv", "script", "stty", "sleep", "sh", "python3", "unshare"] as const;
export type PlumbingCommand = (typeof plumbingCommands)[number];
export const PRIVATE_DIR = "private";
/** The guest's filesystem, made as the sandbox's root (compiled: guest.ts runs the .pyc). */
export const SETUP_SCRIPT = "guest-setup.py";
/** cloud-init and the service manager, run as guest root: a package folder of Python modules. */
export const SYSTEM_PACKAGE = "guest_system";
/** SYSTEM_PACKAGE's modules compiled into one zip application (guest-dir.ts), which python3 runs. */
export const SYSTEM_ZIP = "guest-system.pyz";
/** systemctl, journalctl and the package manager in the guest: a script with a #! line. */
export const COMMANDS_SCRIPT = "guest-commands.py";
export const compiledName = (script: string) => script.replace(/\.py$/, ".pyc");
/**
 * A script's (or a package folder's) source on the host: beside this module, in src/ and in dist/ alike
 * (the build copies it).
 */
export const bootScriptSource = (script: string) => fileURLToPath(new URL(`./${script}`, import.meta.url));
export const INIT_SCRIPT = `${BOOT_DIR}/init.sh`;
/** The host's python3, whose standard library must be under /usr/lib (the guest sees no /usr/local). */
export const HOST_PYTHON = "/usr/bin/python3";
/** fd 3 in the sandbox: boot progress lines for the emulator ("started", then "booted"). */
export const STATUS_FD = 3;
/** fd 4 in the sandbox, when tty1 logs the student in: that shell's terminal, both ways (tty1.ts). */
export const TTY1_FD = 4;

/**
 * What guest root may do when the emulator runs as root. It is uid 0 with this bounding set: enough
 * for the grading agent (switch to the student, bind port 899, kill a check's process group, enter a
 * 0700 home, own its files), never CAP_SYS_ADMIN. Not CAP_DAC_READ_SEARCH either, although the spec
 * lists it: in the host's user namespace it allows open_by_handle_at(2), which opens any file of a
 * mounted filesystem by its handle, outside the sandbox's mounts (Docker's "shocker" escape);
 * CAP_DAC_OVERRIDE already lets the agent enter a 0700 home.
 */
export const guestRootCapabilities = [
  "setuid",
  "setgid",
  "net_bind_service",
  "kill",
  "dac_override",
  "chown",
  "fowner",
];

export interface BootInput {
  hostname: string;
  username: string;
  homeDir: string;
  /** The guest user's login shell (bash when the image has it, else sh). */
  shell: string;
  /** The user data gives the guest user autologin on tty1 (tty1-autologin.ts): a shell there too. */
  tty1Autologin: boolean;
  image: GuestImage;
  cloudConfig: CloudConfig;
  bins: BinPlan;
  /** Host paths of the plumbing commands. */
  plumbing: Record<PlumbingCommand, string>;
  privileged: boolean;
  /** The guest user's uid: its own host uid as root (guest-uids.ts), GUEST_UID in a user namespace. */
  guestUid: number;
  /** The size of the guest's disk (home, /tmp, /var, /usr/local, /root). */
  diskBytes: number;
  /** Processes and threads each of the guest's uids may have (RLIMIT_NPROC; guest root is exempt). */
  processLimit: number;
  /** When the sandbox was spawned (ms since the epoch), for cloud-init's "Up N seconds". */
  startedAt: number;
  /** cloud-init's init stage (write_files) and final stage (runcmd), in ms after the guest started. */
  initDelayMs: number;
  runcmdDelayMs: number;
}

/** File name (relative to the boot directory) -> content. Names under private/ are root's only. */
export function bootFiles(input: BootInput): Map<string, string | Buffer> {
  const files = new Map<string, string | Buffer>([
    ["init.sh", initScript(input.privileged, input.guestUid, input.tty1Autologin)],
    ["console.sh", consoleScript(input.shell, PLUMBING_DIR)],
    ...(input.tty1Autologin ? [["tty1.sh", tty1Script(input.shell, PLUMBING_DIR)] as [string, string]] : []),
    ["image.json", JSON.stringify(imageFacts(input))],
    [`${PRIVATE_DIR}/setup.plan`, setupPlan(input)],
    [`${PRIVATE_DIR}/boot.json`, JSON.stringify(bootPlan(input))],
  ]);
  for (const command of plumbingCommands) files.set(`bin/${command}`, "");
  for (const [name, content] of etcFiles(input)) files.set(`${PRIVATE_DIR}/etc/${name}`, content);
  const { runcmd, bootcmd, writeFiles } = input.cloudConfig;
  if (runcmd.length > 0) files.set(`${PRIVATE_DIR}/runcmd.sh`, shellScript(runcmd));
  if (bootcmd.length > 0) files.set(`${PRIVATE_DIR}/bootcmd.sh`, shellScript(bootcmd));
  writeFiles.forEach((file, index) => files.set(`${PRIVATE_DIR}/files/${index}`, file.content));
  return files;
}

function setpriv(args: string[]): string[] {
  return [`${PLUMBING_DIR}/setpriv`, ...args, "--"];
}

/** Prefix that runs a command as an ordinary guest user: no groups, no capabilities, no_new_privs. */
function asUser(uid: number, privileged: boolean): string[] {
  if (!privileged) return [];
  return setpriv([
    `--reuid=${uid}`,
    `--regid=${uid}`,
    "--clear-groups",
    "--no-new-privs",
    "--inh-caps=-all",
    "--bounding-set=-all",
  ]);
}

/** Prefix that runs a command as guest root: uid 0 with only guestRootCapabilities. */
function asGuestRoot(privileged: boolean): string[] {
  if (!privileged) return [];
  return setpriv([
    "--inh-caps=-all",
    `--bounding-set=-all,${guestRootCapabilities.map((cap) => `+${cap}`).join(",")}`,
  ]);
}

function initScript(privileged: boolean, guestUid: number, tty1: boolean): string {
  const asGuest = shellJoin(asUser(guestUid, privileged));
  const asRoot = shellJoin(asGuestRoot(privileged));
  const status = STATUS_FD;
  // Only a guest root the student cannot be may keep a channel to the emulator: without root, guest
  // root is the student's own uid, and a guest cannot power itself off.
  const keepForManager = privileged ? "" : ` ${status}>&-`;
  // tty1's terminal is the student's alone: the boot and the service manager never get it.
  const tty1Fd = TTY1_FD;
  const noTty1 = tty1 ? ` ${tty1Fd}>&-` : "";
  // A command sh runs in the background ignores SIGINT and SIGQUIT, and so would everything the
  // student runs there (bash passes ignored signals on), so Control+C would stop nothing on tty1:
  // python3 gives the loop both back before it runs it. sh itself cannot: a signal ignored when a
  // non-interactive shell starts stays ignored.
  const withSignals =
    "import os, signal; [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGQUIT)]; " +
    `os.execv("${PLUMBING_DIR}/sh", ["sh", "${BOOT_DIR}/tty1.sh"])`;
  const tty1Console = tty1
    ? `${asGuest} ${PLUMBING_DIR}/python3 -IS -c ${shellQuote(withSignals)} <&${tty1Fd} >&${tty1Fd} 2>&${tty1Fd} ${tty1Fd}>&- &
exec ${tty1Fd}>&-
`
    : "";
  return `# The sandbox's first process after setup (root with every capability when the emulator runs as
# root). fd ${status} is the emulator's boot status pipe, which no guest process may inherit but, as
# real root, the service manager, which says on it when the guest powers off (and lets nothing it
# starts inherit it). The port relay runs outside the sandbox (port-relay.ts), out of every guest
# process's reach.
exec 2>&1
echo started >&${status}
${asRoot} ${PLUMBING_DIR}/python3 -IS ${BOOT_DIR}/${SYSTEM_ZIP} boot ${BOOT_DIR}/${PRIVATE_DIR}/boot.json </dev/null${keepForManager}${noTty1}
echo booted >&${status}
exec ${status}>&-
${tty1Console}exec ${asGuest} ${PLUMBING_DIR}/sh ${BOOT_DIR}/console.sh
`;
}

function imageFacts(input: BootInput) {
  const { image } = input;
  return {
    image: image.image,
    title: image.title,
    packageManager: image.packageManager,
    privileged: input.privileged,
    ...(image.repository ? { repository: image.repository } : {}),
  };
}

/**
 * guest-setup.py's plan: one entry a line, fields separated by tabs (host paths with a tab or a
 * newline in them are left out of the guest).
 */
function setupPlan(input: BootInput): string {
  const { bins, plumbing, privileged } = input;
  const dropToGuest = privileged
    ? []
    : [`${PLUMBING_DIR}/unshare`, "--user", `--map-user=${GUEST_UID}`, `--map-group=${GUEST_UID}`, "--"];
  const lines: string[][] = [["privileged", privileged ? "1" : "0"]];
  for (const dir of bins.binDirs) lines.push(["bindir", dir]);
  for (const command of plumbingCommands) {
    if (privileged && command === "unshare") continue;
    lines.push(["plumbing", `${PLUMBING_DIR}/${command}`, plumbing[command]]);
  }
  for (const [path, kind, ...rest] of bins.entries) lines.push([kind, path, ...rest]);
  for (const [name, mode, gid] of etcFileModes(input)) {
    lines.push(["etc", name, `${BOOT_DIR}/${PRIVATE_DIR}/etc/${name}`, mode.toString(8), "0", String(gid)]);
  }
  for (const dir of ["bin", "etc", "games", "include", "lib", "libexec", "sbin", "share", "src"]) {
    lines.push(["usrlocal", dir]);
  }
  // Without root the home belongs to the user namespace's root, which is the guest's one uid.
  const homeOwner = privileged ? input.guestUid : 0;
  lines.push([
    "disk",
    String(input.diskBytes),
    input.homeDir,
    input.image.homeMode.toString(8),
    String(homeOwner),
  ]);
  lines.push(["nproc", String(input.processLimit)]);
  lines.push(["then", ...dropToGuest, `${PLUMBING_DIR}/sh`, INIT_SCRIPT]);
  return lines
    .filter((fields) => fields.every((field) => !/[\t\n]/.test(field)))
    .map((fields) => fields.join("\t"))
    .join("\n")
    .concat("\n");
}

function bootPlan(input: BootInput) {
  const { cloudConfig } = input;
  const privateDir = `${BOOT_DIR}/${PRIVATE_DIR}`;
  return {
    hostname: input.hostname,
    privileged: input.privileged,
    startedAt: input.startedAt,
    initDelayMs: input.initDelayMs,
    runcmdDelayMs: input.runcmdDelayMs,
    image: imageFacts(input),
    log: cloudConfig.log,
    bootcmd: cloudConfig.bootcmd.length > 0 ? `${privateDir}/bootcmd.sh` : null,
    runcmd: cloudConfig.runcmd.length > 0 ? `${privateDir}/runcmd.sh` : null,
    writeFiles: cloudConfig.writeFiles.map((file, index) => ({
      path: file.path,
      source: `${privateDir}/files/${index}`,
      mode: file.mode,
      owner: file.owner,
      append: file.append,
      defer: file.defer,
    })),
    packages: cloudConfig.packages,
    packageUpdate: cloudConfig.packageUpdate,
    packageUpgrade: cloudConfig.packageUpgrade,
  };
}

// cloud-init's own format (util.shellify): one script, strings verbatim, lists quoted into one command
// line each.
function shellScript(commands: CloudConfig["runcmd"]): string {
  const lines = commands.map((command) => (typeof command === "string" ? command : shellJoin(command)));
  return ["#!/bin/sh", ...lines, ""].join("\n");
}

/** Debian's shadow group, which may read /etc/shadow there (Fedora's shadow is mode 0000). */
const shadowGid = 42;

/** [name in /etc, mode, group id] of the generated /etc files; all belong to root. */
function etcFileModes(input: BootInput): [string, number, number][] {
  const debianLike = input.image.packageManager === "apt";
  const secret: [number, number] = debianLike ? [0o640, shadowGid] : [0o000, 0];
  return [
    ["passwd", 0o644, 0],
    ["group", 0o644, 0],
    ["shadow", ...secret],
    ["gshadow", ...secret],
    ["hosts", 0o644, 0],
    ["hostname", 0o644, 0],
  ];
}

function etcFiles(input: BootInput): [string, string][] {
  const { username, homeDir, hostname, shell } = input;
  const debianLike = input.image.packageManager === "apt";
  const users = ["root", username, "nobody"];
  return [
    [
      "passwd",
      [
        "root:x:0:0:root:/root:/bin/bash",
        `${username}:x:${input.guestUid}:${input.guestUid}:${username}:${homeDir}:${shell}`,
        `nobody:x:${RELAY_UID}:${RELAY_UID}:nobody:/nonexistent:/usr/sbin/nologin`,
        "",
      ].join("\n"),
    ],
    [
      "group",
      [
        "root:x:0:",
        "tty:x:5:",
        ...(debianLike ? [`shadow:x:${shadowGid}:`] : []),
        `${username}:x:${input.guestUid}:`,
        `nogroup:x:${RELAY_UID}:`,
        "",
      ].join("\n"),
    ],
    // Locked passwords: nobody logs in with one (the console logs the student in by itself).
    ["shadow", users.map((user) => `${user}:!*:20000:0:99999:7:::`).join("\n") + "\n"],
    ["gshadow", ["root:*::", `${username}:!::`, "nogroup:*::", ""].join("\n")],
    ["hosts", hosts(hostname)],
    ["hostname", `${hostname}\n`],
  ];
}

function hosts(hostname: string): string {
  return [
    "127.0.0.1 localhost",
    `127.0.1.1 ${hostname}`,
    "::1 localhost ip6-localhost ip6-loopback",
    "",
  ].join("\n");
}
