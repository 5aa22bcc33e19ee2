// A runtime's guests by VMI uid, as the VMI lifecycle asks for them (guest-runtime.ts). A guest is in
// the table from the moment its boot starts, so a stop that comes meanwhile waits for the boot and
// ends the guest; it leaves the table once, by whichever comes first: a stop, a crash, its own end,
// or the emulator closing. The sandboxed and the QEMU runtimes keep theirs here; each boots its own
// guests and ends them its own way.
import type { GuestEvents } from "./guest-runtime.ts";

export interface TabledGuest {
  /** Ends the guest at once and removes what it left on the host. */
  kill(): Promise<void>;
}

interface Entry<G> {
  /** Resolves with the guest once booted, undefined when the boot failed. */
  booting: Promise<G | undefined>;
  guest?: G;
  events: GuestEvents;
}

export class GuestTable<G extends TabledGuest> {
  private readonly entries = new Map<string, Entry<G>>();
  private closed = false;

  /**
   * Boots the VMI's guest with `start`, in the table meanwhile; resolves with it once booted. Rejects
   * when the boot fails, or when the VMI was stopped (or the emulator closed) while it booted: the
   * stop then ends the guest.
   */
  async boot(uid: string, events: GuestEvents, start: () => Promise<G>): Promise<G> {
    if (this.closed) throw new Error("the emulator is shutting down");
    const booting = start();
    const entry: Entry<G> = { booting: booting.catch(() => undefined), events };
    this.entries.set(uid, entry);
    let guest: G;
    try {
      guest = await booting;
    } catch (error) {
      if (this.entries.get(uid) === entry) this.entries.delete(uid);
      throw error;
    }
    if (this.entries.get(uid) !== entry) throw new Error("the VMI was stopped while its guest booted");
    entry.guest = guest;
    return guest;
  }

  find(uid: string): G | undefined {
    return this.entries.get(uid)?.guest;
  }

  /** Takes a guest that ended on its own out of the table; false when a stop or a crash took it first. */
  release(uid: string, guest: G): boolean {
    if (this.entries.get(uid)?.guest !== guest) return false;
    this.entries.delete(uid);
    return true;
  }

  /** Takes the VMI's guest out of the table to be stopped: the guest once its boot is over, if it booted. */
  async take(uid: string): Promise<G | undefined> {
    const entry = this.entries.get(uid);
    if (!entry) return undefined;
    this.entries.delete(uid);
    return entry.booting;
  }

  /** Kills a running guest as a crash would: its VMI hears it failed. False when it has none. */
  async crash(uid: string, reason: string): Promise<boolean> {
    const entry = this.entries.get(uid);
    if (!entry?.guest) return false;
    this.entries.delete(uid);
    await entry.guest.kill();
    entry.events.exited("Failed", reason);
    return true;
  }

  /** Kills every guest, booted or booting; no guest starts afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    const results = await Promise.allSettled(entries.map(async (entry) => (await entry.booting)?.kill()));
    for (const result of results) {
      if (result.status === "rejected") console.error("emulator: killing a guest failed:", result.reason);
    }
  }
}
