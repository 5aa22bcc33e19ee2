// A guest's sandbox as a process of the host: the launcher (bwrap or unshare) that startGuest spawned,
// the handshake on its status pipe ("started" once the init script runs, "booted" once cloud-init is
// done, "poweroff" from the service manager when the guest powers off), the first process of its pid namespace (through which the host reaches the guest's files and
// network), and its end, asked for or not. The guest (guest.ts) decides what a start, a boot or an
// exit means for its serial line, relay and agent; this module only knows processes.
import type { ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { STATUS_FD } from "../boot/boot-files.ts";
import { signalIfRunning } from "../host-signals.ts";
import {
  continueProcesses,
  isRunning,
  killInNamespace,
  namespaceInitOf,
  signalOldestNamed,
  stopNamespace,
  waitUntilEnded,
  type ProcessIdentity,
} from "../isolation/sandbox-process.ts";

const startTimeoutMs = 10_000;

export interface GuestProcessHandlers {
  /** The sandbox runs its init script; `init` is its first process, undefined if it was not found. */
  started(init: ProcessIdentity | undefined): void;
  /** cloud-init has finished and the console's shell starts; again after each reboot. */
  booted(): void;
  /** The guest reboots (Control+Alt+Delete): its processes end, and it boots again in the same sandbox. */
  rebooting(): void;
  /** The guest powered its machine off (poweroff, shutdown now): the host ends it, as QEMU exits. */
  poweredOff(): void;
  /**
   * The launcher is gone. `unexpected` says how when the guest ended by itself after it started,
   * and is undefined when kill() asked for it or the start failed (started() rejects then).
   */
  exited(unexpected: string | undefined): void;
}

type StartState =
  | { kind: "starting"; waiters: ((error: Error | undefined) => void)[] }
  | { kind: "started" }
  | { kind: "failed"; error: Error };

export class GuestProcess {
  private readonly exitedPromise: Promise<void>;
  private launcherRunning = true;
  private killRequested = false;
  private stderrTail = "";
  private startState: StartState = { kind: "starting", waiters: [] };
  private namespaceInit: Promise<ProcessIdentity | undefined> = Promise.resolve(undefined);
  private init: ProcessIdentity | undefined;
  /** What stopAll stopped, for continueAll. */
  private readonly stoppedByUs: ProcessIdentity[] = [];

  constructor(
    private readonly name: string,
    private readonly child: ChildProcess,
    private readonly handlers: GuestProcessHandlers,
  ) {
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-2000);
    });
    readLines(child.stdio[STATUS_FD] as Readable, (line) => this.onStatus(line));
    this.exitedPromise = new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve(this.onExit(signal ?? `code ${code}`)));
      // A launcher that could not be spawned at all never exits.
      child.on("error", (error) => {
        if (child.pid === undefined) resolve(this.onExit(error.message));
      });
    });
  }

  /** Resolves once the sandbox runs the init script; rejects with the sandbox's own error otherwise. */
  started(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.startState.kind === "started") return resolve();
      if (this.startState.kind === "failed") return reject(this.startState.error);
      const timer = setTimeout(
        () => this.startFailed(`no sign of life after ${startTimeoutMs / 1000} s`),
        startTimeoutMs,
      );
      this.startState.waiters.push((error) => {
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      });
    });
  }

  /** Until the launcher has exited. */
  get running(): boolean {
    return this.launcherRunning;
  }

  /** Resolves when the launcher has exited. */
  get exited(): Promise<void> {
    return this.exitedPromise;
  }

  /** A path of the running guest's file system as the host reaches it (through its first process). */
  hostPathOf(path: string): string | undefined {
    return this.launcherRunning && this.init ? `/proc/${this.init.pid}/root${path}` : undefined;
  }

  /** Sends the guest's init (its service manager) a signal, as the kernel does; false if not found. */
  async signalInit(signal: NodeJS.Signals): Promise<boolean> {
    const init = await this.namespaceInit;
    return init !== undefined && this.launcherRunning && signalOldestNamed(init, "systemd", signal);
  }

  /** Kills the guest's processes whose command line contains `text`; returns how many. */
  async killProcesses(text: string): Promise<number> {
    const init = await this.namespaceInit;
    return init && this.launcherRunning ? killInNamespace(init, text) : 0;
  }

  /** Stops (SIGSTOP) every process of the running guest; false when there is none to stop. */
  async stopAll(): Promise<boolean> {
    const init = this.init;
    if (!init || !(await isRunning(init))) return false;
    this.stoppedByUs.push(...(await stopNamespace(init)));
    return true;
  }

  /** Lets the processes stopAll stopped run again (SIGCONT); a job the student suspended stays so. */
  async continueAll(): Promise<void> {
    const stopped = this.stoppedByUs.splice(0);
    if (this.launcherRunning) await continueProcesses(stopped);
  }

  /**
   * Ends the sandbox and resolves once the launcher has exited. `first` runs before the kill, at a
   * point from which the launcher's exit no longer counts as the guest ending by itself.
   */
  async end(first?: () => Promise<void>): Promise<void> {
    if (this.launcherRunning) {
      this.killRequested = true;
      await first?.();
      await this.killSandbox();
    }
    await this.exitedPromise;
  }

  /**
   * After the launcher's exit: ends what is left of the pid namespace, which a launcher that died on
   * its own takes with it by a parent-death signal only a moment later. False if it would not end.
   */
  async endRemains(): Promise<boolean> {
    const init = await this.namespaceInit;
    if (!init || !(await isRunning(init))) return true;
    signalIfRunning(init.pid, "SIGKILL");
    return waitUntilEnded(init, 5000);
  }

  // Killing the pid namespace's first process makes the kernel kill all the others before it can be
  // reaped; the launcher (bwrap or unshare) reaps it and then exits, so the launcher's exit means the
  // guest is wholly gone. Killing the launcher first would not wait for that.
  private async killSandbox(): Promise<void> {
    const launcherPid = this.child.pid;
    if (launcherPid === undefined) return;
    const init = await this.namespaceInit;
    signalIfRunning(init && (await isRunning(init)) ? init.pid : launcherPid, "SIGKILL");
    const fallback = setTimeout(() => signalIfRunning(launcherPid, "SIGKILL"), 2000);
    await this.exitedPromise;
    clearTimeout(fallback);
  }

  private onStatus(line: string): void {
    // The launcher's exit may be seen before the last lines of a pipe it shared with the dead guest.
    if (!this.launcherRunning) return;
    if (line === "started" && this.startState.kind === "starting") {
      const { waiters } = this.startState;
      this.startState = { kind: "started" };
      const pid = this.child.pid;
      this.namespaceInit = (pid === undefined ? Promise.resolve(undefined) : namespaceInitOf(pid)).then(
        (init) => (this.init = init),
      );
      // hostPathOf needs the first process, so a started guest is one whose first process is known.
      void this.namespaceInit.then((init) => {
        this.handlers.started(init);
        for (const waiter of waiters) waiter(undefined);
      });
    } else if (line === "booted") {
      this.handlers.booted();
    } else if (line === "reboot" && this.startState.kind === "started") {
      this.handlers.rebooting();
    } else if (line === "poweroff" && this.startState.kind === "started") {
      this.handlers.poweredOff();
    }
  }

  private startFailed(why: string): void {
    if (this.startState.kind !== "starting") return;
    const { waiters } = this.startState;
    const error = new Error(`guest ${this.name} did not start: ${why}`);
    this.startState = { kind: "failed", error };
    for (const waiter of waiters) waiter(error);
  }

  private onExit(how: string): void {
    this.startFailed(this.stderrTail.trim() || `the sandbox exited with ${how}`);
    if (!this.launcherRunning) return;
    this.launcherRunning = false;
    const detail = this.stderrTail.trim();
    this.handlers.exited(
      !this.killRequested && this.startState.kind === "started"
        ? `the guest's sandbox exited with ${how}${detail ? `: ${detail}` : ""}`
        : undefined,
    );
  }
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
