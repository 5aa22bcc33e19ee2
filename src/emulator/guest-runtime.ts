// The hook through which guests come to life: the VMI lifecycle calls start() before it reports a
// VMI Running (and waits for it) and stop() when the VMI is stopped or deleted. The default does
// nothing; real guests (src/emulator/guests) plug in here.
import type { KubeObject } from "./objects.ts";

export interface GuestEvents {
  /** The guest ended on its own: powered off (Succeeded) or crashed (Failed). */
  exited(phase: "Succeeded" | "Failed", reason: string): void;
}

export interface GuestRuntime {
  /** Boots the guest of a VMI that is about to be Running; a rejection marks the VMI Failed. */
  start(vmi: KubeObject, events: GuestEvents): Promise<void>;
  /** Shuts the guest down; called once per started VMI when it is stopped or deleted. */
  stop(vmi: KubeObject): Promise<void>;
}

export const noGuests: GuestRuntime = {
  start: async () => {},
  stop: async () => {},
};
