// The GuestRuntime that boots each Running VMI as a real Linux under QEMU (qemu-guest.ts), all from
// the one Debian image (image.ts), whatever the VMI's containerDisk names. The image is built (or
// found) when the runtime is made, in the background: the API serves meanwhile, and a VMI that
// starts before it is ready waits for it, or fails with the build's error.
//
// As with the sandboxed guests, each emulator keeps its guests under a folder named after its pid,
// and removes the folders of emulators that are gone.
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { parseQuantity } from "../../../common/quantity.ts";
import type { Registry } from "../../apiserver/registry.ts";
import { guestMemoryRequestBytes, vcpuCount } from "../../cluster/memory-overhead.ts";
import { field, type KubeObject } from "../../cluster/objects.ts";
import type { GuestEvents, GuestRuntime, RunningGuest } from "../guest-runtime.ts";
import { userDataOf } from "../guest-user-data.ts";
import { isAlive } from "../host-signals.ts";
import { removeTree } from "../remove-tree.ts";
import { requireTools } from "./host-tools.ts";
import { ensureGuestImage, type GuestImageFiles } from "./image.ts";
import { accelerator } from "./qemu-command.ts";
import { startQemuGuest, type QemuGuest } from "./qemu-guest.ts";

export interface QemuGuestsOptions {
  registry: Registry;
  /** The emulator's state directory: the image under qemu-images/, the guests under qemu-guests/. */
  stateDir: string;
  /** Hears the image build's steps. */
  log?: (line: string) => void;
}

interface Entry {
  /** Resolves with the guest once QEMU runs, undefined when its start failed. */
  booting: Promise<QemuGuest | undefined>;
  guest?: QemuGuest;
  events: GuestEvents;
}

/** KubeVirt's default terminationGracePeriodSeconds. */
const defaultGraceSeconds = 30;
const defaultMemoryBytes = 1024 ** 3;

export async function createQemuGuests(options: QemuGuestsOptions): Promise<QemuGuests> {
  requireTools(["qemu-system-x86_64", "qemu-img", "xorriso", "setpriv"]);
  const guestsDir = join(options.stateDir, "qemu-guests");
  await removeLeftoverGuests(guestsDir);
  const rootDir = join(guestsDir, String(process.pid));
  await mkdir(rootDir, { recursive: true, mode: 0o700 });
  const image = ensureGuestImage(options.stateDir, options.log);
  // Reported by each VMI that waits for it; unobserved until then.
  image.catch(() => undefined);
  const accel = accelerator();
  options.log?.(
    accel === "kvm"
      ? "guests: QEMU with KVM"
      : "guests: QEMU with TCG, no KVM here (no usable /dev/kvm, or a CPU without vmx/svm): boots take minutes",
  );
  return new QemuGuests(options.registry, rootDir, image, accel);
}

export class QemuGuests implements GuestRuntime {
  private readonly entries = new Map<string, Entry>();
  private closed = false;

  constructor(
    private readonly registry: Registry,
    private readonly rootDir: string,
    private readonly image: Promise<GuestImageFiles>,
    readonly accel: "kvm" | "tcg",
  ) {}

  async start(vmi: KubeObject, events: GuestEvents): Promise<void> {
    if (this.closed) throw new Error("the emulator is shutting down");
    const uid = vmi.metadata.uid;
    const userData = userDataOf(this.registry, vmi);
    const booting = this.image.then((image) =>
      startQemuGuest({
        name: vmi.metadata.name,
        uid,
        vcpus: vcpuCount(vmi),
        memoryBytes: memoryOf(vmi),
        userData,
        image,
        accel: this.accel,
        rootDir: this.rootDir,
      }),
    );
    const entry: Entry = { booting: booting.catch(() => undefined), events };
    this.entries.set(uid, entry);
    let guest: QemuGuest;
    try {
      guest = await booting;
    } catch (error) {
      if (this.entries.get(uid) === entry) this.entries.delete(uid);
      throw error;
    }
    if (this.entries.get(uid) !== entry) throw new Error("the VMI was stopped while its guest booted");
    entry.guest = guest;
    guest.on("agent", (connected) => events.agent(connected));
    guest.on("exit", (phase, reason) => {
      if (this.entries.get(uid) !== entry) return;
      this.entries.delete(uid);
      void guest
        .kill()
        .catch((error: unknown) => console.error("emulator: removing an ended guest:", error))
        .then(() => events.exited(phase, reason));
    });
  }

  async stop(vmi: KubeObject): Promise<void> {
    const entry = this.entries.get(vmi.metadata.uid);
    if (!entry) return;
    this.entries.delete(vmi.metadata.uid);
    const seconds = field(vmi, "spec", "terminationGracePeriodSeconds");
    await (
      await entry.booting
    )?.shutdown((typeof seconds === "number" ? seconds : defaultGraceSeconds) * 1000);
  }

  find(vmiUid: string): RunningGuest | undefined {
    return this.entries.get(vmiUid)?.guest;
  }

  async crash(vmiUid: string, reason: string): Promise<boolean> {
    const entry = this.entries.get(vmiUid);
    if (!entry?.guest) return false;
    this.entries.delete(vmiUid);
    await entry.guest.kill();
    entry.events.exited("Failed", reason);
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    const results = await Promise.allSettled(entries.map(async (entry) => (await entry.booting)?.kill()));
    for (const result of results) {
      if (result.status === "rejected") console.error("emulator: killing a guest failed:", result.reason);
    }
    await removeTree(this.rootDir);
  }
}

/** The memory the guest sees: memory.guest, which the VMI webhook defaults from the request. */
function memoryOf(vmi: KubeObject): number {
  const memory =
    parseQuantity(field(vmi, "spec", "domain", "memory", "guest")) || guestMemoryRequestBytes(vmi);
  return memory > 0 ? memory : defaultMemoryBytes;
}

async function removeLeftoverGuests(guestsDir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(guestsDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  for (const name of names) {
    const pid = Number(name);
    if (/^\d+$/.test(name) && pid !== process.pid && !isAlive(pid)) await removeTree(join(guestsDir, name));
  }
}
