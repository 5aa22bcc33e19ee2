// The hook through which guests come to life: the VMI lifecycle calls start() before it reports a
// VMI Running (and waits for it) and stop() when the VMI is stopped or deleted. The subresources
// (console, port-forward, guest agent) reach a running guest through find(). The default runs no
// guests; sandbox-guests.ts runs emulated ones, qemu/qemu-guests.ts real Linux under QEMU.
import type net from "node:net";
import type { KubeObject } from "../cluster/objects.ts";
import type { GuestAgentInfo, GuestFileSystemList, GuestOsUserList } from "./guest-info.ts";
import type { SerialAttachment, SerialHandlers } from "./serial-line.ts";

/** A running guest as the subresources reach it, whatever runs it. */
export interface RunningGuest {
  readonly name: string;
  /** The serial output since boot as complete lines (what the guest-console-log container prints). */
  consoleLogLines(): string[];
  /** Attach to the serial line. The newest attachment wins: the previous one gets onClose("replaced"). */
  attach(handlers: SerialHandlers): SerialAttachment;
  /**
   * A TCP connection to `port` in the guest, as port-forward makes it. Rejects with code
   * ECONNREFUSED when nothing listens there (where the runtime can tell), EGUESTSTOPPED when the
   * guest is gone.
   */
  connect(port: number): Promise<net.Socket>;
  /**
   * A connection to the guest's VNC server (QEMU's: RFB 3.8, no authentication), as virt-handler
   * dials it for the vnc subresource. Absent for guests without a screen.
   */
  screen?(): Promise<net.Socket>;
  /** The screen as a PNG, as libvirt's screenshot (the vnc/screenshot subresource) takes it. */
  screenshot?(): Promise<Buffer>;
  /** Bodies of KubeVirt's guestosinfo, userlist and filesystemlist subresources. */
  guestOsInfo(): Promise<GuestAgentInfo>;
  userList(): Promise<GuestOsUserList>;
  filesystemList(): Promise<GuestFileSystemList>;
  /** Stops the guest's CPUs (a paused domain): nothing in it runs or answers until resume(). */
  pause(): Promise<void>;
  readonly paused: boolean;
  resume(): Promise<void>;
  /**
   * Kills the guest's processes whose command line contains `text`, as an OOM kill would; returns
   * how many. Only where the host reaches the guest's processes: a real guest's are behind its kernel.
   */
  killProcesses?(text: string): Promise<number>;
}

export interface GuestEvents {
  /** The guest ended on its own: powered off (Succeeded) or crashed (Failed). */
  exited(phase: "Succeeded" | "Failed", reason: string): void;
  /** The guest agent connected or went away (KubeVirt's AgentConnected condition). */
  agent(connected: boolean): void;
}

export interface GuestRuntime {
  /** Boots the guest of a VMI that is about to be Running; a rejection marks the VMI Failed. */
  start(vmi: KubeObject, events: GuestEvents): Promise<void>;
  /** Shuts the guest down; called once per started VMI when it is stopped or deleted. */
  stop(vmi: KubeObject): Promise<void>;
  /** The running guest of a VMI, by the VMI's uid. */
  find(vmiUid: string): RunningGuest | undefined;
  /** Kills a guest as a crash would (its VMI turns Failed); false when the VMI has no guest. */
  crash(vmiUid: string, reason: string): Promise<boolean>;
  /** Kills every guest: the emulator is shutting down. */
  close(): Promise<void>;
}

export const noGuests: GuestRuntime = {
  start: async () => {},
  stop: async () => {},
  find: () => undefined,
  crash: async () => false,
  close: async () => {},
};
