// guests/: the guests behind Running VMIs. The emulator sees them only through GuestRuntime
// (guest-runtime.ts); sandbox-guests.ts implements it with real guests, each booted with its VMI's
// cloud-init user data (guest-user-data.ts). Everything else here knows nothing of Kubernetes: a
// guest (this file) in its sandbox (sandbox.ts), its images, limits, serial line, cloud-init, emulated
// systemd and port relay.
//
// An emulated guest: what runs "inside" a Running VMI. A real bash behind a serial line, in a sandbox
// with its own disk (home, /tmp), offering only the commands of its image (images.ts), with a guest
// root, cloud-init's stages and an emulated systemd at boot (guest_system/), TCP ports reachable
// through the port relay, and the facts a guest agent would report. It is held to its limits
// (guest-limits.ts): processes, memory and CPU by cgroups of its own, the disk by its size, and as
// root its user is a host uid of its own. The emulator starts one when a VMI reaches Running and
// kills it when the VMI goes away.
//
// The guest here is the composition of its parts, each with one job: its folder, made before it
// starts (guest-dir.ts); the sandbox's process (guest-process.ts); the serial line and console log
// on that process's stdio; the port relay (guest-relay.ts); the agent's state and facts
// (guest-agent.ts); and what it holds on the host until it is gone (guest-files.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { mkdir, mkdtemp } from "node:fs/promises";
import type net from "node:net";
import { basename, join } from "node:path";
import type { Duplex, Readable, Writable } from "node:stream";
import { cgroupRefusal, guestCgroupSetup } from "../cgroups/cgroup-setup.ts";
import { ConsoleLog } from "../console-log.ts";
import { GuestAgent } from "./guest-agent.ts";
import { createGuestCgroup, type GuestCgroup } from "../cgroups/guest-cgroups.ts";
import { hostnameFor, hostPlumbing, launchOf, prepareGuestDir, type GuestLayout } from "./guest-dir.ts";
import { GuestHoldings } from "./guest-files.ts";
import type { GuestAgentInfo, GuestFileSystemList, GuestOsUserList } from "../guest-info.ts";
import { defaultGuestLimits, type GuestLimits } from "../cgroups/guest-limits.ts";
import { GuestProcess } from "./guest-process.ts";
import { GuestRelay } from "../relay/guest-relay.ts";
import type { RunningGuest } from "../guest-runtime.ts";
import { allocateGuestUid, releaseGuestUid } from "../isolation/guest-uids.ts";
import type { GuestImage } from "../boot/images.ts";
import { removeTree } from "../remove-tree.ts";
import { sandboxAvailable } from "../isolation/sandbox-support.ts";
import { GUEST_UID, SANDBOX_PATH, runsPrivileged, type SandboxBackend } from "../isolation/sandbox.ts";
import { SerialOutputProcessing } from "./serial-output.ts";
import { SerialLine, type SerialAttachment, type SerialHandlers } from "../serial-line.ts";
import { startScreenServer, type ScreenServer } from "../screen/screen-server.ts";
import { Tty1 } from "../screen/tty1.ts";
import { TTY1_FD } from "../boot/boot-files.ts";

export type { SerialAttachment, SerialHandlers } from "../serial-line.ts";

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
  /** The guest powered its machine off (poweroff, shutdown now); whoever runs it ends it with kill(). */
  poweroff: [];
}

/** A sandboxed guest: what every running guest offers, and the host-side reach of a sandbox. */
export interface Guest extends RunningGuest {
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
  on<E extends keyof GuestEvents>(event: E, listener: (...args: GuestEvents[E]) => void): void;
  off<E extends keyof GuestEvents>(event: E, listener: (...args: GuestEvents[E]) => void): void;
  /** Ends every process of the guest, then removes its files and cgroups; keepHome copies the home out first. */
  kill(options?: { keepHome?: boolean }): Promise<void>;
  /** Kills the guest's processes whose command line contains `text`, as an OOM kill would; returns how many. */
  killProcesses(text: string): Promise<number>;
  /**
   * Stops every process of the guest (SIGSTOP), as a paused domain's vCPUs stop: nothing in it runs,
   * uses CPU or answers until resume(). The serial line stays attached; input waits in its pipe.
   */
  pause(): Promise<void>;
  /** Lets every process run again (SIGCONT). */
  resume(): Promise<void>;
}

const defaultUsername = "student";
const namePattern = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const usernamePattern = /^[a-z_][a-z0-9_-]{0,31}$/;

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
      // fd 3 the boot status pipe, fd 4 tty1's terminal when the student has a shell there.
      stdio: layout.tty1Autologin
        ? ["pipe", "pipe", "pipe", "pipe", "pipe"]
        : ["pipe", "pipe", "pipe", "pipe"],
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

class SandboxedGuest implements Guest {
  readonly name: string;
  readonly hostUid: number;
  readonly bootLog: readonly string[];
  private readonly layout: GuestLayout;
  private readonly sandbox: GuestProcess;
  private readonly serial: SerialLine;
  private readonly consoleLog = new ConsoleLog();
  private readonly events = new EventEmitter();
  private readonly relay: GuestRelay;
  private readonly agent: GuestAgent;
  private readonly holdings: GuestHoldings;
  private removal: Promise<void> | undefined;
  private isPaused = false;
  /** tty1: its login prompt, or the student's shell there (screen/tty1.ts). */
  private readonly tty1: Tty1;
  /** tty1's screen, served from the first viewer on (screen/). */
  private screenServer: Promise<ScreenServer> | undefined;

  constructor(
    name: string,
    username: string,
    layout: GuestLayout,
    child: ChildProcess,
    owned: { uid: number | undefined; cgroup: GuestCgroup | undefined },
  ) {
    this.name = name;
    this.hostUid = owned.uid ?? process.getuid?.() ?? -1;
    this.bootLog = layout.bootLog;
    this.layout = layout;
    this.holdings = new GuestHoldings(layout, owned);
    this.relay = new GuestRelay(name, layout.relaySocket);
    const serialOutput = new SerialOutputProcessing();
    (child.stdout as Readable).pipe(serialOutput);
    this.serial = new SerialLine(child.stdin as Writable, serialOutput);
    serialOutput.on("data", (chunk: Buffer) => this.consoleLog.append(chunk));
    this.agent = new GuestAgent({
      hostname: layout.hostname,
      username,
      guestHome: layout.guestHome,
      guestDir: layout.guestDir,
      hostPathOf: (path) => this.sandbox.hostPathOf(path),
      onChange: (connected) => this.events.emit("agent", connected),
    });
    const tty1Shell = child.stdio[TTY1_FD] as Duplex | null | undefined;
    this.tty1 = new Tty1({
      hostname: layout.hostname,
      ...(tty1Shell ? { autologin: username, shell: tty1Shell } : {}),
      ctrlAltDel: () => this.ctrlAltDel(),
    });
    this.sandbox = new GuestProcess(name, child, {
      started: (init) => void this.relay.start(init, () => this.sandbox.running),
      booted: () => {
        serialOutput.shellStarted();
        this.tty1.booted();
        this.agent.booted();
      },
      rebooting: () => {
        this.agent.stopped();
        this.tty1.reboot();
      },
      poweredOff: () => this.events.emit("poweroff"),
      exited: (unexpected) => this.onExit(unexpected),
    });
  }

  /** Resolves once the sandbox runs the init script; rejects with the sandbox's own error otherwise. */
  started(): Promise<void> {
    return this.sandbox.started();
  }

  get agentConnected(): boolean {
    return this.agent.connected;
  }

  get homeDir(): string {
    return this.sandbox.hostPathOf(this.layout.guestHome) ?? this.layout.homeDir;
  }

  consoleLogLines(): string[] {
    return this.consoleLog.completeLines();
  }

  attach(handlers: SerialHandlers): SerialAttachment {
    return this.serial.attach(handlers);
  }

  connect(port: number): Promise<net.Socket> {
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      return Promise.reject(new RangeError(`port must be an integer from 1 to 65535, not ${port}`));
    }
    if (!this.sandbox.running) return Promise.reject(this.stoppedError());
    return this.relay.connect(port);
  }

  /** The VGA console's VNC server, as QEMU's: tty1's login prompt, or the student's shell there. */
  async screen(): Promise<net.Socket> {
    return (await this.screenOnce()).connect();
  }

  async screenshot(): Promise<Buffer> {
    return (await this.screenOnce()).png();
  }

  private screenOnce(): Promise<ScreenServer> {
    if (!this.sandbox.running) return Promise.reject(this.stoppedError());
    this.screenServer ??= startScreenServer({
      tty: this.tty1,
      name: this.name,
      // Beside the port relay's socket, in the emulator's folder of guests that no guest sees.
      socketPath: `${this.layout.relaySocket}-vnc`,
    });
    return this.screenServer;
  }

  on<E extends keyof GuestEvents>(event: E, listener: (...args: GuestEvents[E]) => void): void {
    this.events.on(event, listener as (...args: unknown[]) => void);
  }

  off<E extends keyof GuestEvents>(event: E, listener: (...args: GuestEvents[E]) => void): void {
    this.events.off(event, listener as (...args: unknown[]) => void);
  }

  guestOsInfo(): Promise<GuestAgentInfo> {
    return this.agent.guestOsInfo();
  }

  async userList(): Promise<GuestOsUserList> {
    return this.agent.userList();
  }

  filesystemList(): Promise<GuestFileSystemList> {
    return this.agent.filesystemList();
  }

  killProcesses(text: string): Promise<number> {
    return this.sandbox.killProcesses(text);
  }

  async pause(): Promise<void> {
    this.isPaused = true;
    await this.sandbox.stopAll();
  }

  get paused(): boolean {
    return this.isPaused;
  }

  resume(): Promise<void> {
    this.isPaused = false;
    return this.sandbox.continueAll();
  }

  async kill(options: { keepHome?: boolean } = {}): Promise<void> {
    const keepHome = options.keepHome === true;
    let copyFailure: Error | undefined;
    // A home that could not be copied must not keep the guest stopped with its cgroups, uid and
    // files: it is ended and released all the same, and the failure reported afterwards.
    await this.sandbox.end(async () => {
      if (!keepHome) return;
      try {
        await this.copyHomeOut();
      } catch (error) {
        copyFailure = error as Error;
      }
    });
    this.removal ??= this.removeFilesOnceEnded(keepHome);
    await this.removal;
    if (copyFailure) {
      throw new Error(
        `${copyFailure.message}; the guest was ended and released anyway, and what was copied is in ${this.layout.homeDir}`,
      );
    }
  }

  // The home lives on the guest's own disk, which goes with its last process. Every process is
  // stopped first, so that none can swap a directory for a symlink while the host copies.
  private async copyHomeOut(): Promise<void> {
    const home = this.sandbox.hostPathOf(this.layout.guestHome);
    if (!home || !(await this.sandbox.stopAll())) return;
    await this.holdings.copyHomeOut(home, this.name);
  }

  private async removeFilesOnceEnded(keepHome: boolean): Promise<void> {
    if (!(await this.sandbox.endRemains())) {
      throw new Error(
        `guest ${this.name}: its processes did not end, its files stay in ${this.layout.guestDir}`,
      );
    }
    await this.relay.stopped;
    await this.holdings.release(keepHome);
  }

  private onExit(unexpected: string | undefined): void {
    this.agent.stopped();
    this.serial.stop();
    this.relay.stop(this.stoppedError());
    void this.screenServer?.then((server) => server.close()).catch(() => undefined);
    this.tty1.close();
    if (unexpected) this.events.emit("exit", unexpected);
  }

  // The console's Boot key: Linux hands it to init as SIGINT, and systemd reboots (guest_system/
  // reboot.py's ctrl_alt_del). A paused guest's init gets it when it runs again, as a signal waits
  // for a stopped process.
  private ctrlAltDel(): void {
    void this.sandbox.signalInit("SIGINT").catch(() => undefined);
  }

  private stoppedError(): Error {
    return guestError("EGUESTSTOPPED", `guest ${this.name} is not running`);
  }
}

function guestError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}
