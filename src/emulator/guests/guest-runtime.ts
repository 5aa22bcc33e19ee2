// The hook through which guests come to life: the VMI lifecycle calls start() before it reports a
// VMI Running (and waits for it) and stop() when the VMI is stopped or deleted. The subresources
// (console, port-forward, guest agent) reach a running guest through find(). The default runs no
// guests; sandbox-guests.ts runs real ones.
import type { KubeObject } from "../cluster/objects.ts";
import type { Guest } from "./guest.ts";

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
  find(vmiUid: string): Guest | undefined;
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
