// A real guest: one QEMU process booting the Debian image (image.ts) with the VMI's vCPUs and
// memory, on a copy-on-write overlay of the image's root disk and a NoCloud seed of its user data,
// as virt-launcher runs a domain. The emulator reaches it as virt-handler does: the serial console
// through QEMU's chardev socket, the domain through QMP (stop, cont, system_powerdown), the guest
// agent through its virtio-serial port, and the guest's own network stack for port-forward.
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import net from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ConsoleLog } from "../console-log.ts";
import type { GuestAgentInfo, GuestFileSystemList, GuestOsUserList } from "../guest-info.ts";
import type { RunningGuest } from "../guest-runtime.ts";
import { SerialLine, type SerialAttachment, type SerialHandlers } from "../serial-line.ts";
import { AgentChannel } from "./agent-channel.ts";
import { agentFileSystemList, agentInfo, agentUserList } from "./agent-info.ts";
import { guestListensOn } from "./guest-listeners.ts";
import { findTool, run } from "./host-tools.ts";
import type { GuestImageFiles } from "./image.ts";
import { writeNoCloudSeed } from "./nocloud-seed.ts";
import { Qmp } from "./qmp.ts";
import { qemuArgs, sockets } from "./qemu-command.ts";

export interface QemuGuestOptions {
  name: string;
  /** The VMI's uid: cloud-init's instance-id. */
  uid: string;
  vcpus: number;
  memoryBytes: number;
  userData: string | undefined;
  image: GuestImageFiles;
  accel: "kvm" | "tcg";
  usbTablet: boolean;
  /** The guest gets a fresh folder under it. */
  rootDir: string;
}

export interface QemuGuestEvents {
  agent: [connected: boolean];
  /** QEMU ended without being asked to: the guest powered off (Succeeded) or QEMU failed. */
  exit: [phase: "Succeeded" | "Failed", reason: string];
}

/** How long QEMU may take to open its sockets before the start counts as failed. */
const socketsTimeoutMs = 15_000;

export async function startQemuGuest(options: QemuGuestOptions): Promise<QemuGuest> {
  const dir = await mkdtemp(join(options.rootDir, "g-"));
  try {
    await run(findTool("qemu-img")!, [
      "create",
      "-q",
      "-f",
      "qcow2",
      "-F",
      "raw",
      "-b",
      options.image.rootDisk,
      join(dir, "root.qcow2"),
    ]);
    await writeNoCloudSeed(dir, {
      instanceId: options.uid,
      hostname: options.name,
      userData: options.userData,
    });
    const args = qemuArgs({ ...options, dir });
    // setpriv --pdeathsig: an emulator that is SIGKILLed takes its QEMU processes with it.
    const child = spawn(
      findTool("setpriv")!,
      ["--pdeathsig", "KILL", "--", findTool("qemu-system-x86_64")!, ...args],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    const guest = new QemuGuest(options.name, dir, child);
    try {
      await guest.started();
    } catch (error) {
      await guest.kill();
      throw error;
    }
    return guest;
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

export class QemuGuest implements RunningGuest {
  private readonly events = new EventEmitter();
  private readonly consoleLog = new ConsoleLog();
  private readonly agent: AgentChannel;
  private readonly exited: Promise<void>;
  private readonly forwards = new Map<number, Promise<number>>();
  private serial: SerialLine | undefined;
  private qmp: Qmp | undefined;
  private stderrTail = "";
  private running = true;
  private ending = false;
  private isPaused = false;
  /** The last SHUTDOWN event: whether the guest itself powered off. */
  private shutdownByGuest = false;
  private removal: Promise<void> | undefined;

  constructor(
    readonly name: string,
    private readonly dir: string,
    private readonly child: ChildProcess,
  ) {
    this.agent = new AgentChannel(join(dir, sockets.agent), (connected) =>
      this.events.emit("agent", connected),
    );
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-2000);
    });
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.running = false;
        this.onExit(code, signal);
        resolve();
      });
      child.once("error", (error) => {
        this.stderrTail += error.message;
      });
    });
  }

  /** Resolves once QEMU serves its sockets, the serial line and agent are attached and the CPUs run. */
  async started(): Promise<void> {
    const deadline = Date.now() + socketsTimeoutMs;
    const names = [sockets.qmp, sockets.serial, sockets.agent];
    while (!names.every((name) => existsSync(join(this.dir, name)))) {
      if (!this.running) throw new Error(`QEMU exited at start: ${this.stderrTail.trim() || "no message"}`);
      if (Date.now() > deadline) throw new Error("QEMU did not open its sockets within 15 s");
      await sleep(50);
    }
    this.qmp = await Qmp.connect(join(this.dir, sockets.qmp), (event, data) => {
      if (event === "SHUTDOWN")
        this.shutdownByGuest = (data as { guest?: boolean } | undefined)?.guest === true;
    });
    const serialSocket = await connectUnix(join(this.dir, sockets.serial));
    this.serial = new SerialLine(serialSocket, serialSocket);
    serialSocket.on("data", (chunk: Buffer) => this.consoleLog.append(chunk));
    serialSocket.on("error", () => undefined);
    await this.agent.start();
    await this.qmp.execute("cont");
  }

  get agentConnected(): boolean {
    return this.agent.connected;
  }

  consoleLogLines(): string[] {
    return this.consoleLog.completeLines();
  }

  attach(handlers: SerialHandlers): SerialAttachment {
    if (!this.serial) throw new Error(`guest ${this.name} has not started`);
    return this.serial.attach(handlers);
  }

  /**
   * Through a forward from a loopback port of the host to the guest's address, added to QEMU's user
   * network the first time a guest port is asked for. QEMU accepts on the host before it dials the
   * guest, so a guest port nobody listens on would be a connection that closes at once; the guest's
   * kernel is asked first (guest-listeners.ts), and such a port is ECONNREFUSED, as virt-api's dial
   * finds it. WARNING: before the guest agent answers (the first seconds of the boot) every port
   * counts as refused, and when the agent fails to answer the port is dialled unasked.
   */
  /** QEMU's VNC server (`-vnc unix:`), one connection per viewer, as virt-handler dials it. */
  screen(): Promise<net.Socket> {
    return connectUnix(join(this.dir, sockets.vnc));
  }

  /** QEMU's screendump, as PNG: what libvirt's virDomainScreenshot takes. */
  async screenshot(): Promise<Buffer> {
    if (!this.qmp) throw new Error(`guest ${this.name} is not running`);
    const file = join(this.dir, "screenshot.png");
    await this.qmp.execute("screendump", { filename: file, format: "png" });
    try {
      return await readFile(file);
    } finally {
      await rm(file, { force: true });
    }
  }

  async connect(port: number): Promise<net.Socket> {
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new RangeError(`port must be an integer from 1 to 65535, not ${port}`);
    }
    if (!this.running || this.ending) throw guestError("EGUESTSTOPPED", `guest ${this.name} is not running`);
    const listening = this.agent.connected ? await guestListensOn(this.agent, port).catch(() => true) : false;
    if (!listening) throw guestError("ECONNREFUSED", `nothing in guest ${this.name} listens on port ${port}`);
    let forward = this.forwards.get(port);
    if (!forward) {
      forward = this.addForward(port);
      this.forwards.set(port, forward);
      forward.catch(() => this.forwards.delete(port));
    }
    const hostPort = await forward;
    return new Promise((resolve, reject) => {
      const socket = net.createConnection({ host: "127.0.0.1", port: hostPort }, () => resolve(socket));
      socket.once("error", reject);
    });
  }

  on<E extends keyof QemuGuestEvents>(event: E, listener: (...args: QemuGuestEvents[E]) => void): void {
    this.events.on(event, listener as (...args: unknown[]) => void);
  }

  guestOsInfo(): Promise<GuestAgentInfo> {
    return agentInfo(this.agent);
  }

  userList(): Promise<GuestOsUserList> {
    return agentUserList(this.agent);
  }

  filesystemList(): Promise<GuestFileSystemList> {
    return agentFileSystemList(this.agent);
  }

  async pause(): Promise<void> {
    this.agent.suspend(true);
    await this.qmp?.execute("stop");
    this.isPaused = true;
  }

  get paused(): boolean {
    return this.isPaused;
  }

  async resume(): Promise<void> {
    await this.qmp?.execute("cont");
    this.isPaused = false;
    this.agent.suspend(false);
  }

  /**
   * An ACPI power button press, as on a VMI's deletion, then QEMU killed if the guest has not
   * powered off within the grace period. A paused guest cannot act on it: it is killed at once
   * (its grace period was spent waiting before this is called).
   */
  async shutdown(graceMs: number): Promise<void> {
    this.ending = true;
    if (this.running && !this.isPaused) {
      await this.qmp?.execute("system_powerdown").catch(() => undefined);
      await Promise.race([this.exited, sleep(graceMs)]);
    }
    await this.kill();
  }

  /** Ends QEMU at once (the domain destroyed) and removes the guest's folder. */
  async kill(): Promise<void> {
    this.ending = true;
    if (this.running) this.child.kill("SIGKILL");
    await this.exited;
    this.removal ??= rm(this.dir, { recursive: true, force: true });
    await this.removal;
  }

  private async addForward(guestPort: number): Promise<number> {
    const hostPort = await freeLoopbackPort();
    const answer = await this.qmp!.human(`hostfwd_add net0 tcp:127.0.0.1:${hostPort}-:${guestPort}`);
    if (answer.trim() !== "") throw new Error(`QEMU could not forward port ${guestPort}: ${answer.trim()}`);
    return hostPort;
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.agent.stop();
    this.serial?.stop();
    this.qmp?.close();
    if (this.ending) return;
    if (code === 0 && this.shutdownByGuest) {
      this.events.emit("exit", "Succeeded", "the guest powered off");
    } else {
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const detail = this.stderrTail.trim().split("\n").slice(-3).join(" ");
      this.events.emit("exit", "Failed", `QEMU ${how}${detail ? `: ${detail}` : ""}`);
    }
  }
}

function connectUnix(path: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(path, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** A port nobody on the host's loopback uses now, for QEMU to listen on next. */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function guestError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}
