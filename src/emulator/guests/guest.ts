// An emulated guest: what runs "inside" a Running VMI. A real bash behind a serial line, in a sandbox
// with its own disk (home, /tmp), offering only the commands of its image (images.ts), with a guest
// root, cloud-init's stages and an emulated systemd at boot (guest-system.py), TCP ports reachable
// through the port relay, and the facts a guest agent would report. It is held to its limits
// (guest-limits.ts): processes, memory and CPU by cgroups of its own, the disk by its size, and as
// root its user is a host uid of its own. The emulator starts one when a VMI reaches Running and
// kills it when the VMI goes away.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, open, readFile, rm, writeFile, type FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import net from "node:net";
import { basename, dirname, join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  BOOT_DIR,
  COMMANDS_SCRIPT,
  HOST_PYTHON,
  PRIVATE_DIR,
  SETUP_SCRIPT,
  STATUS_FD,
  SYSTEM_SCRIPT,
  bootFiles,
  compiledName,
  plumbingCommands,
  type PlumbingCommand,
} from "./boot-files.ts";
import { parseCloudConfig } from "./cloud-init.ts";
import { cgroupRefusal, createGuestCgroup, guestCgroupSetup, type GuestCgroup } from "./guest-cgroups.ts";
import { defaultGuestLimits, type GuestLimits } from "./guest-limits.ts";
import { allocateGuestUid, releaseGuestUid } from "./guest-uids.ts";
import { binPlanFor, hostCommand } from "./guest-bin.ts";
import { defaultGuestImage, type GuestImage } from "./images.ts";
import {
  guestAgentInfo,
  guestFileSystemList,
  guestUserList,
  type GuestAgentInfo,
  type GuestFacts,
  type GuestFileSystemList,
  type GuestOsUserList,
} from "./guest-info.ts";
import {
  GUEST_UID,
  SANDBOX_PATH,
  runsPrivileged,
  sandboxAvailable,
  sandboxLaunch,
  type SandboxBackend,
  type SandboxPlan,
} from "./sandbox.ts";
import { PortRelay, socketPathMax } from "./port-relay.ts";
import { removeTree } from "./remove-tree.ts";
import {
  isRunning,
  killInNamespace,
  namespaceInitOf,
  stopNamespace,
  waitUntilEnded,
  type ProcessIdentity,
} from "./sandbox-process.ts";
import { ConsoleLog } from "./console-log.ts";
import { SerialLine, type SerialAttachment, type SerialHandlers } from "./serial-line.ts";
import { signalIfRunning } from "./host-signals.ts";

export type { SerialAttachment, SerialHandlers } from "./serial-line.ts";

export interface GuestOptions {
  /** The VMI's name; also the guest's hostname. */
  name: string;
  /** Each guest gets a fresh directory under it (home, /tmp, boot files). */
  rootDir: string;
  /** cloud-init NoCloud user data: a #cloud-config document. */
  userData?: string;
  /** The guest user; default "student". */
  username?: string;
  /** Use this sandbox backend; by default bubblewrap as root, unshare otherwise (guestBackends()). */
  sandbox?: SandboxBackend;
  /** The image's manifest: the commands the guest offers, its package manager. Default: defaultGuestImage. */
  image?: GuestImage;
  /**
   * How long after the sandbox starts cloud-init reaches runcmd (its final stage); write_files (the
   * init stage) comes at a quarter of it. Default 0. The emulator passes 30-120 s with realistic timing.
   */
  cloudInitDelayMs?: number;
  /** What the guest may take of the host; what is left out comes from defaultGuestLimits. */
  limits?: Partial<GuestLimits>;
  /**
   * Start the guest even where it cannot get cgroup limits (guest-cgroups.ts says why), with what
   * limits remain: only for guests you trust. Otherwise startGuest refuses there.
   */
  acceptUnlimited?: boolean;
}

export interface GuestEvents {
  /** The guest agent connected (cloud-init finished) or went away (the guest stopped). */
  agent: [connected: boolean];
  /** The guest stopped by itself (not through kill()), e.g. its sandbox crashed. */
  exit: [reason: string];
}

export interface Guest {
  readonly name: string;
  /**
   * The guest's home as the host reaches it: inside the running guest (its disk is the guest's own
   * tmpfs), afterwards the copy kill({ keepHome: true }) left on the host.
   */
  readonly homeDir: string;
  /** The guest user's uid on the host: one of its own as root, the emulator's own without root. */
  readonly hostUid: number;
  /** Boot log lines about the user data: what cloud-init skipped or ignored. Also printed on the console at boot. */
  readonly bootLog: readonly string[];
  /** True from the end of cloud-init until the guest stops (KubeVirt's AgentConnected condition). */
  readonly agentConnected: boolean;
  /** The serial output since boot as complete lines (what the guest-console-log container prints). */
  consoleLogLines(): string[];
  /** Attach to the serial line. The newest attachment wins: the previous one gets onClose("replaced"). */
  attach(handlers: SerialHandlers): SerialAttachment;
  /**
   * A TCP connection to `port` on the guest's loopback, as port-forward makes it. Rejects with code
   * ECONNREFUSED when nothing listens there, EGUESTSTOPPED when the guest is gone.
   */
  connect(port: number): Promise<net.Socket>;
  on<E extends keyof GuestEvents>(event: E, listener: (...args: GuestEvents[E]) => void): void;
  off<E extends keyof GuestEvents>(event: E, listener: (...args: GuestEvents[E]) => void): void;
  /** Bodies of KubeVirt's guestosinfo, userlist and filesystemlist subresources. */
  guestOsInfo(): Promise<GuestAgentInfo>;
  userList(): GuestOsUserList;
  filesystemList(): Promise<GuestFileSystemList>;
  /** Ends every process of the guest, then removes its files and cgroups; keepHome copies the home out first. */
  kill(options?: { keepHome?: boolean }): Promise<void>;
  /** Kills the guest's processes whose command line contains `text`, as an OOM kill would; returns how many. */
  killProcesses(text: string): Promise<number>;
}

const defaultUsername = "student";
const namePattern = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const usernamePattern = /^[a-z_][a-z0-9_-]{0,31}$/;
const startTimeoutMs = 10_000;
const connectTimeoutMs = 10_000;
const sourceOf = (file: string) => fileURLToPath(new URL(`./${file}`, import.meta.url));

let compiled: Promise<Map<string, Buffer>> | undefined;

/**
 * guest-setup.py and guest-system.py compiled by the host's python3, once per process: every guest
 * runs both, and compiling them is most of what starting python costs (a .pyc runs as it is).
 */
function compiledScripts(): Promise<Map<string, Buffer>> {
  compiled ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), "lab-guest-pyc-"));
    try {
      const scripts = [SETUP_SCRIPT, SYSTEM_SCRIPT];
      const outputs = scripts.map((script) => join(dir, compiledName(script)));
      const program =
        "import py_compile, sys\n" +
        "for source, target in zip(sys.argv[1::2], sys.argv[2::2]):\n" +
        "    py_compile.compile(source, cfile=target, doraise=True)\n";
      const args = scripts.flatMap((script, index) => [sourceOf(script), outputs[index] ?? ""]);
      await new Promise<void>((resolve, reject) =>
        execFile(HOST_PYTHON, ["-IS", "-c", program, ...args], (error) =>
          error ? reject(error) : resolve(),
        ),
      );
      return new Map(
        await Promise.all(
          scripts.map(
            async (script, index) => [compiledName(script), await readFile(outputs[index] ?? "")] as const,
          ),
        ),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  compiled.catch(() => (compiled = undefined));
  return compiled;
}

let plumbing: Record<PlumbingCommand, string> | undefined;

/** The host binaries the guest's own scripts run (at PLUMBING_DIR), found once per process. */
function hostPlumbing(): Record<PlumbingCommand, string> {
  if (plumbing) return plumbing;
  if (!existsSync(HOST_PYTHON)) {
    throw new Error(
      `Guests need ${HOST_PYTHON} on the host (install the "python3" package): it runs their cloud-init and systemd`,
    );
  }
  const found: Partial<Record<PlumbingCommand, string>> = {};
  for (const command of plumbingCommands) {
    const path =
      command === "python3" ? hostCommand("python3", "/usr/bin") : hostCommand(command, SANDBOX_PATH);
    if (!path)
      throw new Error(`Guests need ${command} on the host (util-linux, coreutils), and it is missing`);
    found[command] = path;
  }
  plumbing = found as Record<PlumbingCommand, string>;
  return plumbing;
}

/** Why guests cannot run on this host beyond the sandbox itself (python3, util-linux), or undefined. */
export function guestHostProblem(): string | undefined {
  try {
    hostPlumbing();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export async function startGuest(options: GuestOptions): Promise<Guest> {
  const support = await sandboxAvailable(options.sandbox);
  if (!support.ok) throw new Error(support.message);
  if (support.backend === "bwrap" && !runsPrivileged()) {
    throw new Error(
      "Without root, guests run in the unshare backend only: bubblewrap cannot let a guest open port 899",
    );
  }
  const username = options.username ?? defaultUsername;
  if (!namePattern.test(options.name))
    throw new Error(`guest name ${JSON.stringify(options.name)} is not a VMI name`);
  if (!usernamePattern.test(username))
    throw new Error(`guest user name ${JSON.stringify(username)} is not valid`);

  const limits: GuestLimits = { ...defaultGuestLimits, ...options.limits };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new RangeError(`limits.${name} must be a positive integer`);
  }
  const cgroups = await guestCgroupSetup();
  if (cgroups.problems.length > 0 && options.acceptUnlimited !== true)
    throw new Error(cgroupRefusal(cgroups));

  await mkdir(options.rootDir, { recursive: true });
  const guestDir = await mkdtemp(join(options.rootDir, `${hostnameFor(options.name)}-`));
  const privileged = runsPrivileged();
  // Until the guest object owns them, the uid and the cgroup are given back here on failure.
  let uid: number | undefined;
  let cgroup: GuestCgroup | undefined;
  try {
    uid = privileged ? await allocateGuestUid() : GUEST_UID;
    const layout = await prepareGuestDir(guestDir, options, username, uid, limits);
    cgroup = await createGuestCgroup(cgroups, basename(guestDir), limits);
    const [file, args] = cgroup.wrap(...launchOf(layout, support.backend));
    const child = spawn(file, args, {
      env: {
        PATH: SANDBOX_PATH,
        HOME: layout.guestHome,
        USER: username,
        LOGNAME: username,
        SHELL: layout.shell,
        // What systemd's serial-getty sets on a real guest's ttyS0.
        TERM: "vt220",
        LANG: "C.UTF-8",
      },
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      // A session of its own: no controlling terminal shared with the emulator.
      detached: true,
    });
    const owned = { uid: privileged ? uid : undefined, cgroup };
    uid = undefined;
    cgroup = undefined;
    const guest = new SandboxedGuest(options.name, username, layout, child, owned);
    try {
      await guest.started();
    } catch (error) {
      await guest.kill();
      throw error;
    }
    return guest;
  } catch (error) {
    await cgroup?.remove();
    if (privileged && uid !== undefined) releaseGuestUid(uid);
    await removeTree(guestDir);
    throw error;
  }
}

// A VMI name may have 253 characters, a Linux hostname 64: cut it to 63, the limit of a DNS label.
function hostnameFor(name: string): string {
  return name.slice(0, 63);
}

interface GuestLayout {
  guestDir: string;
  /** Where kill({ keepHome: true }) copies the home; the running guest's home is on its own disk. */
  homeDir: string;
  bootDir: string;
  rootMountPoint: string;
  /** Where the guest's port relay listens: in the emulator's own folder of guests, which no guest sees. */
  relaySocket: string;
  guestHome: string;
  hostname: string;
  shell: string;
  bootLog: string[];
}

async function prepareGuestDir(
  guestDir: string,
  options: GuestOptions,
  username: string,
  guestUid: number,
  limits: GuestLimits,
): Promise<GuestLayout> {
  const image = options.image ?? defaultGuestImage;
  const layout: GuestLayout = {
    guestDir,
    homeDir: join(guestDir, "home"),
    bootDir: join(guestDir, "boot"),
    rootMountPoint: join(guestDir, "root"),
    // Beside the guest's folder, not in it: a Unix socket's path has 107 bytes at most.
    relaySocket: join(dirname(guestDir), `relay-${randomBytes(8).toString("hex")}`),
    guestHome: `/home/${username}`,
    hostname: hostnameFor(options.name),
    shell: image.commands.has("bash") ? "/bin/bash" : "/bin/sh",
    bootLog: [],
  };
  if (Buffer.byteLength(layout.relaySocket) > socketPathMax) {
    throw new Error(
      `the guests' folder ${dirname(guestDir)} has too long a path for the port relay's socket (${socketPathMax} bytes at most)`,
    );
  }
  // Modes are set explicitly: the emulator's umask must not keep the guest's users from their boot files.
  for (const dir of [layout.bootDir, layout.rootMountPoint]) {
    await mkdir(dir);
    await chmod(dir, 0o755);
  }
  const privileged = runsPrivileged();

  const cloudConfig = parseCloudConfig(options.userData);
  layout.bootLog = cloudConfig.log;
  const delay = Math.max(0, options.cloudInitDelayMs ?? 0);
  const files = bootFiles({
    hostname: layout.hostname,
    username,
    homeDir: layout.guestHome,
    shell: layout.shell,
    image,
    cloudConfig,
    bins: binPlanFor(image, `${BOOT_DIR}/${COMMANDS_SCRIPT}`),
    plumbing: hostPlumbing(),
    privileged,
    guestUid,
    diskBytes: limits.diskBytes,
    processLimit: limits.pids,
    startedAt: Date.now(),
    initDelayMs: Math.round(delay / 4),
    runcmdDelayMs: delay,
  });
  files.set(COMMANDS_SCRIPT, await readFile(sourceOf(COMMANDS_SCRIPT)));
  for (const [name, content] of await compiledScripts()) files.set(name, content);
  // What guest root alone may read on a real guest (user data, write_files contents, shadow) is in
  // a directory only the emulator's own uid, which is guest root's, may enter.
  const made = new Set<string>();
  for (const [file, content] of files) {
    const path = join(layout.bootDir, file);
    const dir = dirname(path);
    const privateFile = file.startsWith(`${PRIVATE_DIR}/`);
    if (!made.has(dir)) {
      await mkdir(dir, { recursive: true });
      await chmod(dir, privateFile ? 0o700 : 0o755);
      made.add(dir);
    }
    await writeFile(path, content);
    await chmod(path, privateFile ? 0o600 : file === COMMANDS_SCRIPT ? 0o755 : 0o644);
  }
  return layout;
}

function launchOf(layout: GuestLayout, backend: SandboxBackend): [string, string[]] {
  const plan: SandboxPlan = {
    hostname: layout.hostname,
    // Mount points of the guest's disk, which guest-setup.py mounts there.
    directories: ["/home", "/root", layout.guestHome, "/tmp"],
    writable: [],
    readOnly: [{ hostPath: layout.bootDir, guestPath: BOOT_DIR }],
    workDir: layout.guestHome,
    rootMountPoint: layout.rootMountPoint,
    // Setup runs as the sandbox's root while the host's /usr/bin is still there, then execs init.sh.
    command: [
      HOST_PYTHON,
      "-IS",
      `${BOOT_DIR}/${compiledName(SETUP_SCRIPT)}`,
      `${BOOT_DIR}/${PRIVATE_DIR}/setup.plan`,
    ],
    commandRunsAsRoot: true,
  };
  const launch = sandboxLaunch(plan, backend, runsPrivileged());
  return [launch.file, launch.args];
}

/**
 * The lines of the boot status pipe. Without root, guest root is the guest's one uid and could take the
 * pipe from the first process: a line longer than any status is dropped, never collected.
 */
function readLines(stream: Readable, onLine: (line: string) => void): void {
  const lineMax = 64;
  let pending = "";
  let overlong = false;
  stream.on("data", (chunk: Buffer) => {
    const lines = (pending + chunk.toString("latin1")).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      if (!overlong) onLine(line);
      overlong = false;
    }
    if (pending.length > lineMax) {
      pending = "";
      overlong = true;
    }
  });
}

type StartState =
  | { kind: "starting"; waiters: ((error: Error | undefined) => void)[] }
  | { kind: "started" }
  | { kind: "failed"; error: Error };

class SandboxedGuest implements Guest {
  readonly name: string;
  readonly hostUid: number;
  readonly bootLog: readonly string[];
  readonly #username: string;
  readonly #layout: GuestLayout;
  readonly #child: ChildProcess;
  readonly #serial: SerialLine;
  readonly #consoleLog = new ConsoleLog();
  readonly #events = new EventEmitter();
  readonly #relay: PortRelay;
  #relayStopped: Promise<void> = Promise.resolve();
  readonly #startedAt = Date.now() / 1000;
  #loginTime: number | undefined;
  #agentConnected = false;
  #exited: Promise<void>;
  #running = true;
  #killRequested = false;
  #stderrTail = "";
  #removal: Promise<void> | undefined;
  #startState: StartState = { kind: "starting", waiters: [] };
  #namespaceInit: Promise<ProcessIdentity | undefined> = Promise.resolve(undefined);
  #init: ProcessIdentity | undefined;
  /** Given back when the guest's files are gone (as root: a uid of its own). */
  #uid: number | undefined;
  #cgroup: GuestCgroup | undefined;

  constructor(
    name: string,
    username: string,
    layout: GuestLayout,
    child: ChildProcess,
    owned: { uid: number | undefined; cgroup: GuestCgroup | undefined },
  ) {
    this.name = name;
    this.hostUid = owned.uid ?? process.getuid?.() ?? -1;
    this.#uid = owned.uid;
    this.#cgroup = owned.cgroup;
    this.bootLog = layout.bootLog;
    this.#username = username;
    this.#layout = layout;
    this.#child = child;
    this.#relay = new PortRelay(name);
    this.#serial = new SerialLine(child.stdin as Writable, child.stdout as Readable);
    child.stdout?.on("data", (chunk: Buffer) => this.#consoleLog.append(chunk));
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      this.#stderrTail = (this.#stderrTail + text).slice(-2000);
    });
    readLines(child.stdio[STATUS_FD] as Readable, (line) => this.#onStatus(line));
    this.#exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve(this.#onExit(signal ?? `code ${code}`)));
      // A launcher that could not be spawned at all never exits.
      child.on("error", (error) => {
        if (child.pid === undefined) resolve(this.#onExit(error.message));
      });
    });
  }

  /** Resolves once the sandbox runs the init script; rejects with the sandbox's own error otherwise. */
  started(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#startState.kind === "started") return resolve();
      if (this.#startState.kind === "failed") return reject(this.#startState.error);
      const timer = setTimeout(
        () => this.#startFailed(`no sign of life after ${startTimeoutMs / 1000} s`),
        startTimeoutMs,
      );
      this.#startState.waiters.push((error) => {
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      });
    });
  }

  get agentConnected(): boolean {
    return this.#agentConnected;
  }

  get homeDir(): string {
    return this.#guestPath(this.#layout.guestHome) ?? this.#layout.homeDir;
  }

  /** A path of the running guest's file system as the host reaches it (through its first process). */
  #guestPath(path: string): string | undefined {
    return this.#running && this.#init ? `/proc/${this.#init.pid}/root${path}` : undefined;
  }

  consoleLogLines(): string[] {
    return this.#consoleLog.completeLines();
  }

  attach(handlers: SerialHandlers): SerialAttachment {
    return this.#serial.attach(handlers);
  }

  connect(port: number): Promise<net.Socket> {
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      return Promise.reject(new RangeError(`port must be an integer from 1 to 65535, not ${port}`));
    }
    if (!this.#running) return Promise.reject(this.#stoppedError());
    return this.#relay.connect(port, connectTimeoutMs);
  }

  on<E extends keyof GuestEvents>(event: E, listener: (...args: GuestEvents[E]) => void): void {
    this.#events.on(event, listener as (...args: unknown[]) => void);
  }

  off<E extends keyof GuestEvents>(event: E, listener: (...args: GuestEvents[E]) => void): void {
    this.#events.off(event, listener as (...args: unknown[]) => void);
  }

  guestOsInfo(): Promise<GuestAgentInfo> {
    return guestAgentInfo(this.#facts());
  }

  userList(): GuestOsUserList {
    return guestUserList(this.#facts());
  }

  filesystemList(): Promise<GuestFileSystemList> {
    return guestFileSystemList(this.#facts());
  }

  async killProcesses(text: string): Promise<number> {
    const init = await this.#namespaceInit;
    return init && this.#running ? killInNamespace(init, text) : 0;
  }

  async kill(options: { keepHome?: boolean } = {}): Promise<void> {
    const keepHome = options.keepHome === true;
    let copyFailure: Error | undefined;
    if (this.#running) {
      this.#killRequested = true;
      // A home that could not be copied must not keep the guest stopped with its cgroups, uid and
      // files: it is ended and released all the same, and the failure reported afterwards.
      if (keepHome) {
        try {
          await this.#copyHomeOut();
        } catch (error) {
          copyFailure = error as Error;
        }
      }
      await this.#killSandbox();
    }
    await this.#exited;
    this.#removal ??= this.#removeFilesOnceEnded(keepHome);
    await this.#removal;
    if (copyFailure) {
      throw new Error(
        `${copyFailure.message}; the guest was ended and released anyway, and what was copied is in ${this.#layout.homeDir}`,
      );
    }
  }

  // Killing the pid namespace's first process makes the kernel kill all the others before it can be
  // reaped; the launcher (bwrap or unshare) reaps it and then exits, so the launcher's exit means the
  // guest is wholly gone. Killing the launcher first would not wait for that.
  async #killSandbox(): Promise<void> {
    const launcherPid = this.#child.pid;
    if (launcherPid === undefined) return;
    const init = await this.#namespaceInit;
    signalIfRunning(init && (await isRunning(init)) ? init.pid : launcherPid, "SIGKILL");
    const fallback = setTimeout(() => signalIfRunning(launcherPid, "SIGKILL"), 2000);
    await this.#exited;
    clearTimeout(fallback);
  }

  // The home lives on the guest's own disk, which goes with its last process. Every process is
  // stopped first, so that none can swap a directory for a symlink while the host copies.
  async #copyHomeOut(): Promise<void> {
    const init = this.#init;
    const home = this.#guestPath(this.#layout.guestHome);
    if (!init || !home || !(await isRunning(init))) return;
    await stopNamespace(init);
    await new Promise<void>((resolve, reject) =>
      execFile("cp", ["-a", "--no-target-directory", home, this.#layout.homeDir], (error, _out, stderr) =>
        error
          ? reject(
              new Error(`guest ${this.name}: keeping its home failed: ${stderr.trim() || error.message}`),
            )
          : resolve(),
      ),
    );
  }

  async #removeFilesOnceEnded(keepHome: boolean): Promise<void> {
    const { guestDir, bootDir, rootMountPoint } = this.#layout;
    // A launcher that died on its own takes the sandbox with it by a parent-death signal, a moment later.
    const init = await this.#namespaceInit;
    if (init && (await isRunning(init))) {
      signalIfRunning(init.pid, "SIGKILL");
      if (!(await waitUntilEnded(init, 5000))) {
        throw new Error(`guest ${this.name}: its processes did not end, its files stay in ${guestDir}`);
      }
    }
    await this.#relayStopped;
    // Also kills whatever is left: a process that the pid namespace's end did not reach.
    await this.#cgroup?.remove();
    if (keepHome) {
      for (const dir of [bootDir, rootMountPoint]) await removeTree(dir);
    } else {
      await removeTree(guestDir);
    }
    if (this.#uid !== undefined) releaseGuestUid(this.#uid);
    this.#uid = undefined;
  }

  #onStatus(line: string): void {
    // The launcher's exit may be seen before the last lines of a pipe it shared with the dead guest.
    if (!this.#running) return;
    if (line === "started" && this.#startState.kind === "starting") {
      const { waiters } = this.#startState;
      this.#startState = { kind: "started" };
      const pid = this.#child.pid;
      this.#namespaceInit = (pid === undefined ? Promise.resolve(undefined) : namespaceInitOf(pid)).then(
        (init) => (this.#init = init),
      );
      // homeDir needs the first process, so a started guest is one whose first process is known.
      void this.#namespaceInit.then((init) => {
        void this.#startRelay(init);
        for (const waiter of waiters) waiter(undefined);
      });
    } else if (line === "booted") {
      this.#loginTime = Date.now() / 1000;
      this.#setAgent(true);
    }
  }

  // The relay gets the guest's network namespace as a descriptor, opened while the first process is
  // known to still be the guest's: a pid that has ended may already be another process's.
  async #startRelay(init: ProcessIdentity | undefined): Promise<void> {
    if (!init) return this.#relay.failToStart("the guest's first process was not found");
    let namespace: FileHandle | undefined;
    try {
      namespace = await open(`/proc/${init.pid}/ns/net`, "r");
      if (!this.#running || !(await isRunning(init))) return;
      this.#relay.start({
        networkNamespaceFd: namespace.fd,
        socketPath: this.#layout.relaySocket,
        privileged: runsPrivileged(),
      });
    } catch (error) {
      this.#relay.failToStart((error as Error).message);
    } finally {
      await namespace?.close();
    }
  }

  #startFailed(why: string): void {
    if (this.#startState.kind !== "starting") return;
    const { waiters } = this.#startState;
    const error = new Error(`guest ${this.name} did not start: ${why}`);
    this.#startState = { kind: "failed", error };
    for (const waiter of waiters) waiter(error);
  }

  #onExit(how: string): void {
    this.#startFailed(this.#stderrTail.trim() || `the sandbox exited with ${how}`);
    if (!this.#running) return;
    this.#running = false;
    this.#setAgent(false);
    this.#serial.stop();
    this.#relayStopped = this.#relay
      .stop(this.#stoppedError())
      .catch((error: unknown) =>
        console.error(`emulator: guest ${this.name}: stopping its port relay:`, error),
      );
    if (!this.#killRequested && this.#startState.kind === "started") {
      const detail = this.#stderrTail.trim();
      this.#events.emit("exit", `the guest's sandbox exited with ${how}${detail ? `: ${detail}` : ""}`);
    }
  }

  #setAgent(connected: boolean): void {
    if (this.#agentConnected === connected) return;
    this.#agentConnected = connected;
    this.#events.emit("agent", connected);
  }

  #stoppedError(): Error {
    return guestError("EGUESTSTOPPED", `guest ${this.name} is not running`);
  }

  #facts(): GuestFacts {
    const { guestHome, hostname } = this.#layout;
    // Not running: paths that do not exist, which the agent subresources never reach (no agent).
    const hostPath = (path: string) => this.#guestPath(path) ?? join(this.#layout.guestDir, "gone");
    return {
      hostname,
      username: this.#username,
      loginTime: this.#loginTime ?? this.#startedAt,
      mounts: [
        { diskName: "home", mountPoint: guestHome, hostPath: hostPath(guestHome) },
        { diskName: "tmp", mountPoint: "/tmp", hostPath: hostPath("/tmp") },
      ],
    };
  }
}

function guestError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}
