// The GuestRuntime that boots each Running VMI as a real Linux under QEMU (qemu-guest.ts), all from
// the one Debian image (image.ts), whatever the VMI's containerDisk names. The image is built (or
// found) when the runtime is made, in the background: the API serves meanwhile, and a VMI that
// starts before it is ready waits for it, or fails with the build's error.
//
// As with the sandboxed guests, each emulator keeps its guests in its own folder (guest-folders.ts),
// by VMI uid (guest-table.ts).
import { join } from "node:path";
import { parseQuantity } from "../../../common/quantity.ts";
import type { Registry } from "../../apiserver/registry.ts";
import { guestMemoryRequestBytes, vcpuCount } from "../../cluster/memory-overhead.ts";
import { field, type KubeObject } from "../../cluster/objects.ts";
import type { GuestEvents, GuestRuntime, RunningGuest } from "../guest-runtime.ts";
import { userDataOf } from "../guest-user-data.ts";
import { ownGuestsFolder } from "../guest-folders.ts";
import { GuestTable } from "../guest-table.ts";
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

/** KubeVirt's default terminationGracePeriodSeconds. */
const defaultGraceSeconds = 30;
const defaultMemoryBytes = 1024 ** 3;

export async function createQemuGuests(options: QemuGuestsOptions): Promise<QemuGuests> {
  requireTools(["qemu-system-x86_64", "qemu-img", "xorriso", "setpriv"]);
  const rootDir = await ownGuestsFolder(join(options.stateDir, "qemu-guests"));
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
  private readonly guests = new GuestTable<QemuGuest>();

  constructor(
    private readonly registry: Registry,
    private readonly rootDir: string,
    private readonly image: Promise<GuestImageFiles>,
    readonly accel: "kvm" | "tcg",
  ) {}

  async start(vmi: KubeObject, events: GuestEvents): Promise<void> {
    const uid = vmi.metadata.uid;
    const userData = userDataOf(this.registry, vmi);
    const guest = await this.guests.boot(uid, events, async () =>
      startQemuGuest({
        name: vmi.metadata.name,
        uid,
        vcpus: vcpuCount(vmi),
        memoryBytes: memoryOf(vmi),
        userData,
        image: await this.image,
        accel: this.accel,
        usbTablet: hasUsbTablet(vmi),
        rootDir: this.rootDir,
      }),
    );
    guest.on("agent", (connected) => events.agent(connected));
    guest.on("exit", (phase, reason) => {
      if (!this.guests.release(uid, guest)) return;
      void guest
        .kill()
        .catch((error: unknown) => console.error("emulator: removing an ended guest:", error))
        .then(() => events.exited(phase, reason));
    });
  }

  async stop(vmi: KubeObject): Promise<void> {
    const seconds = field(vmi, "spec", "terminationGracePeriodSeconds");
    const guest = await this.guests.take(vmi.metadata.uid);
    await guest?.shutdown((typeof seconds === "number" ? seconds : defaultGraceSeconds) * 1000);
  }

  find(vmiUid: string): RunningGuest | undefined {
    return this.guests.find(vmiUid);
  }

  crash(vmiUid: string, reason: string): Promise<boolean> {
    return this.guests.crash(vmiUid, reason);
  }

  async close(): Promise<void> {
    await this.guests.close();
    await removeTree(this.rootDir);
  }
}

/** A tablet on the USB bus among the VMI's inputs (KubeVirt's converter, compute/input_device.go). */
function hasUsbTablet(vmi: KubeObject): boolean {
  const inputs = field(vmi, "spec", "domain", "devices", "inputs");
  return (
    Array.isArray(inputs) &&
    inputs.some(
      (input: { type?: unknown; bus?: unknown }) => input?.type === "tablet" && input?.bus === "usb",
    )
  );
}

/** The memory the guest sees: memory.guest, which the VMI webhook defaults from the request. */
function memoryOf(vmi: KubeObject): number {
  const memory =
    parseQuantity(field(vmi, "spec", "domain", "memory", "guest")) || guestMemoryRequestBytes(vmi);
  return memory > 0 ? memory : defaultMemoryBytes;
}
