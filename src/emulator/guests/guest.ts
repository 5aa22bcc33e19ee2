// An emulated guest: what runs "inside" a Running VMI. A real bash behind a serial line, in a sandbox
// with its own home and /tmp, offering only the commands of its image (images.ts), with a guest root,
// cloud-init's stages and an emulated systemd at boot (guest-system.py), TCP ports reachable through
// the port relay, and the facts a guest agent would report. The emulator starts one when a VMI reaches
// Running and kills it when the VMI goes away.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import net from "node:net";
import { dirname, join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  BOOT_DIR,
  COMMANDS_SCRIPT,
  HOST_PYTHON,
  NODE_PATH,
  PRIVATE_DIR,
  RELAY_DIR,
  RELAY_SCRIPT,
  SETUP_SCRIPT,
  STATUS_FD,
  SYSTEM_SCRIPT,
  bootFiles,
  compiledName,
  plumbingCommands,
  type PlumbingCommand,
} from "./boot-files.ts";
import { parseCloudConfig } from "./cloud-init.ts";
import { binPlanFor, hostCommand, hostEtcSecrets } from "./guest-bin.ts";
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
  RELAY_UID,
  SANDBOX_PATH,
  runsPrivileged,
  sandboxAvailable,
  sandboxLaunch,
  type SandboxBackend,
  type SandboxPlan,
} from "./sandbox.ts";
import { removeTree } from "./remove-tree.ts";
import {
  isRunning,
  killInNamespace,
  namespaceInitOf,
  waitUntilEnded,
  type ProcessIdentity,
} from "./sandbox-process.ts";
import { ConsoleLog } from "./console-log.ts";
import { SerialLine, type SerialAttachment, type SerialHandlers } from "./serial-line.ts";

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
}

export interface GuestEvents {
  /** The guest agent connected (cloud-init finished) or went away (the guest stopped). */
  agent: [connected: boolean];
  /** The guest stopped by itself (not through kill()), e.g. its sandbox crashed. */
  exit: [reason: string];
}

export interface Guest {
  readonly name: string;
  /** The guest's home directory on the host. */
  readonly homeDir: string;
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
  /** Ends every process of the guest, then removes its files (all but the home with keepHome). */
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

  await mkdir(options.rootDir, { recursive: true });
  const guestDir = await mkdtemp(join(options.rootDir, `${hostnameFor(options.name)}-`));
  try {
    const layout = await prepareGuestDir(guestDir, options, username);
    const child = spawn(...launchOf(layout, support.backend), {
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
      stdio: ["pipe", "pipe", "pipe", "ipc", "pipe"],
      // A session of its own: no controlling terminal shared with the emulator.
      detached: true,
    });
    const guest = new SandboxedGuest(options.name, username, layout, child);
    try {
      await guest.started();
    } catch (error) {
      await guest.kill();
      throw error;
    }
    return guest;
  } catch (error) {
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
  homeDir: string;
  tmpDir: string;
  bootDir: string;
  rootMountPoint: string;
  guestHome: string;
  hostname: string;
  shell: string;
  bootLog: string[];
}

async function prepareGuestDir(
  guestDir: string,
  options: GuestOptions,
  username: string,
): Promise<GuestLayout> {
  const image = options.image ?? defaultGuestImage;
  const layout: GuestLayout = {
    guestDir,
    homeDir: join(guestDir, "home"),
    tmpDir: join(guestDir, "tmp"),
    bootDir: join(guestDir, "boot"),
    rootMountPoint: join(guestDir, "root"),
    guestHome: `/home/${username}`,
    hostname: hostnameFor(options.name),
    shell: image.commands.has("bash") ? "/bin/bash" : "/bin/sh",
    bootLog: [],
  };
  // Modes are set explicitly: the emulator's umask must not keep the relay (running as nobody) from its files.
  for (const dir of [layout.homeDir, layout.tmpDir, layout.bootDir, layout.rootMountPoint]) {
    await mkdir(dir);
    await chmod(dir, 0o755);
  }
  await chmod(layout.tmpDir, 0o1777);
  const privileged = runsPrivileged();
  if (privileged) await chown(layout.homeDir, GUEST_UID, GUEST_UID);
  await chmod(layout.homeDir, image.homeMode);

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
    etcHidden: privileged ? hostEtcSecrets() : [],
    privileged,
    startedAt: Date.now(),
    initDelayMs: Math.round(delay / 4),
    runcmdDelayMs: delay,
  });
  files.set(`${RELAY_DIR}/${RELAY_SCRIPT}`, await readFile(sourceOf(RELAY_SCRIPT)));
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
  if (privileged) {
    const relayDir = join(layout.bootDir, RELAY_DIR);
    await chown(relayDir, 0, RELAY_UID);
    await chmod(relayDir, 0o750);
  }
  return layout;
}

function launchOf(layout: GuestLayout, backend: SandboxBackend): [string, string[]] {
  const plan: SandboxPlan = {
    hostname: layout.hostname,
    directories: ["/home", "/root"],
    writable: [
      { hostPath: layout.homeDir, guestPath: layout.guestHome },
      { hostPath: layout.tmpDir, guestPath: "/tmp" },
    ],
    readOnly: [
      { hostPath: layout.bootDir, guestPath: BOOT_DIR },
      // The relay runs on the emulator's own node, which may live outside the system directories.
      { hostPath: process.execPath, guestPath: NODE_PATH },
    ],
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

function readLines(stream: Readable, onLine: (line: string) => void): void {
  let pending = "";
  stream.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    lines.forEach(onLine);
  });
}

type StartState =
  | { kind: "starting"; waiters: ((error: Error | undefined) => void)[] }
  | { kind: "started" }
  | { kind: "failed"; error: Error };

interface PendingConnect {
  port: number;
  resolve(socket: net.Socket): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

class SandboxedGuest implements Guest {
  readonly name: string;
  readonly homeDir: string;
  readonly bootLog: readonly string[];
  readonly #username: string;
  readonly #layout: GuestLayout;
  readonly #child: ChildProcess;
  readonly #serial: SerialLine;
  readonly #consoleLog = new ConsoleLog();
  readonly #events = new EventEmitter();
  readonly #pending = new Map<number, PendingConnect>();
  readonly #startedAt = Date.now() / 1000;
  #loginTime: number | undefined;
  #agentConnected = false;
  #nextRequest = 1;
  #exited: Promise<void>;
  #running = true;
  #killRequested = false;
  #stderrTail = "";
  #removal: Promise<void> | undefined;
  #startState: StartState = { kind: "starting", waiters: [] };
  #namespaceInit: Promise<ProcessIdentity | undefined> = Promise.resolve(undefined);

  constructor(name: string, username: string, layout: GuestLayout, child: ChildProcess) {
    this.name = name;
    this.homeDir = layout.homeDir;
    this.bootLog = layout.bootLog;
    this.#username = username;
    this.#layout = layout;
    this.#child = child;
    this.#serial = new SerialLine(child.stdin as Writable, child.stdout as Readable);
    child.stdout?.on("data", (chunk: Buffer) => this.#consoleLog.append(chunk));
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      this.#stderrTail = (this.#stderrTail + text).slice(-2000);
    });
    readLines(child.stdio[STATUS_FD] as Readable, (line) => this.#onStatus(line));
    child.on("message", (message: unknown, handle: unknown) => this.#onRelayMessage(message, handle));
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
    const id = this.#nextRequest++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          this.#settle(id, guestError("ETIMEDOUT", `the port relay of guest ${this.name} did not answer`)),
        connectTimeoutMs,
      );
      this.#pending.set(id, { port, resolve, reject, timer });
      this.#child.send({ type: "connect", id, port }, (error) => {
        if (error) this.#settle(id, this.#running ? error : this.#stoppedError());
      });
    });
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
    if (this.#running) {
      this.#killRequested = true;
      await this.#killSandbox();
    }
    await this.#exited;
    this.#removal ??= this.#removeFilesOnceEnded(options.keepHome === true);
    await this.#removal;
  }

  // Killing the pid namespace's first process makes the kernel kill all the others before it can be
  // reaped; the launcher (bwrap or unshare) reaps it and then exits, so the launcher's exit means the
  // guest is wholly gone. Killing the launcher first would not wait for that.
  async #killSandbox(): Promise<void> {
    const launcherPid = this.#child.pid;
    if (launcherPid === undefined) return;
    const init = await this.#namespaceInit;
    signal(init && (await isRunning(init)) ? init.pid : launcherPid, "SIGKILL");
    const fallback = setTimeout(() => signal(launcherPid, "SIGKILL"), 2000);
    await this.#exited;
    clearTimeout(fallback);
  }

  async #removeFilesOnceEnded(keepHome: boolean): Promise<void> {
    const { guestDir, tmpDir, bootDir, rootMountPoint } = this.#layout;
    // A launcher that died on its own takes the sandbox with it by a parent-death signal, a moment later.
    const init = await this.#namespaceInit;
    if (init && (await isRunning(init))) {
      signal(init.pid, "SIGKILL");
      if (!(await waitUntilEnded(init, 5000))) {
        throw new Error(`guest ${this.name}: its processes did not end, its files stay in ${guestDir}`);
      }
    }
    if (!keepHome) return removeTree(guestDir);
    for (const dir of [tmpDir, bootDir, rootMountPoint]) await removeTree(dir);
  }

  #onStatus(line: string): void {
    // The launcher's exit may be seen before the last lines of a pipe it shared with the dead guest.
    if (!this.#running) return;
    if (line === "started" && this.#startState.kind === "starting") {
      const { waiters } = this.#startState;
      this.#startState = { kind: "started" };
      if (this.#child.pid !== undefined) this.#namespaceInit = namespaceInitOf(this.#child.pid);
      for (const waiter of waiters) waiter(undefined);
    } else if (line === "booted") {
      this.#loginTime = Date.now() / 1000;
      this.#setAgent(true);
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
    for (const id of [...this.#pending.keys()]) this.#settle(id, this.#stoppedError());
    if (!this.#killRequested && this.#startState.kind === "started") {
      const detail = this.#stderrTail.trim();
      this.#events.emit("exit", `the guest's sandbox exited with ${how}${detail ? `: ${detail}` : ""}`);
    }
  }

  #onRelayMessage(message: unknown, handle: unknown): void {
    if (typeof message !== "object" || message === null) return;
    const { type, id, code, message: text } = message as Record<string, unknown>;
    const socket = handle instanceof net.Socket ? handle : undefined;
    const pending = typeof id === "number" ? this.#pending.get(id) : undefined;
    if (type === "connected" && socket && pending && typeof id === "number") {
      this.#settle(id, socket);
      return;
    }
    // An answer nobody waits for any more (timed out, guest stopped): its socket goes nowhere.
    socket?.destroy();
    if (!pending || typeof id !== "number") return;
    if (code === "ECONNREFUSED") {
      this.#settle(
        id,
        guestError(
          "ECONNREFUSED",
          `connection refused: nothing listens on port ${pending.port} in guest ${this.name}`,
        ),
      );
    } else {
      const reason = typeof text === "string" ? text : "unknown error";
      const errorCode = typeof code === "string" ? code : "EIO";
      this.#settle(
        id,
        guestError(errorCode, `connecting to port ${pending.port} in guest ${this.name}: ${reason}`),
      );
    }
  }

  #settle(id: number, outcome: net.Socket | Error): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
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
    const { homeDir, tmpDir, guestHome, hostname } = this.#layout;
    return {
      hostname,
      username: this.#username,
      loginTime: this.#loginTime ?? this.#startedAt,
      mounts: [
        { diskName: "home", mountPoint: guestHome, hostPath: homeDir },
        { diskName: "tmp", mountPoint: "/tmp", hostPath: tmpDir },
      ],
    };
  }
}

function guestError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}
