// The GuestRuntime that gives each Running VMI a real guest (guest.ts): bash in a sandbox,
// booted with the VMI's cloud-init user data, held to the VMI's memory and vCPUs and to the cluster
// config's process and disk limits. Guests are kept by VMI uid for the subresources (guest-table.ts),
// their files in this emulator's own folder (guest-folders.ts).
import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseQuantity } from "../../../common/quantity.ts";
import { defaultGuestLimitSettings, type ClusterConfig } from "../../cluster/cluster-config.ts";
import { guestMemoryRequestBytes, vcpuCount } from "../../cluster/memory-overhead.ts";
import { runcmdDelayMs, timingsFor, type Timings } from "../../cluster/timing.ts";
import type { GuestEvents, GuestRuntime } from "../guest-runtime.ts";
import { userDataOf } from "../guest-user-data.ts";
import { startGuest, type Guest } from "./guest.ts";
import type { GuestLimits } from "../cgroups/guest-limits.ts";
import { guestImageFor, type ExtraImage } from "../boot/images.ts";
import { removeTree } from "../remove-tree.ts";
import { guestVisibleHostPaths, type SandboxBackend } from "../isolation/sandbox.ts";
import { field, stringField, type KubeObject } from "../../cluster/objects.ts";
import type { Registry } from "../../apiserver/registry.ts";
import { ownGuestsFolder } from "../guest-folders.ts";
import { GuestTable } from "../guest-table.ts";

export interface SandboxGuestsOptions {
  registry: Registry;
  /** Usually `<stateDir>/guests`. */
  guestsDir: string;
  /** Default: bubblewrap as root, unshare otherwise. */
  sandbox?: SandboxBackend;
  /** How long guests take from Running to runcmd (`toRuncmd`). Default: fast timing. */
  timings?: Timings;
  /** Images the cluster config declares, on top of the known ones (guests/images.ts). */
  images?: readonly ExtraImage[];
  /** The cluster config's guestLimits; default its defaults. */
  limits?: ClusterConfig["guestLimits"];
  /** Start guests where they cannot get cgroup limits (see startGuest's acceptUnlimited). */
  acceptUnlimited?: boolean;
  /**
   * The emulator's folders with secrets in them, which no guest may see (its state directory, the
   * folders of the kubeconfigs it writes); the program's own checkout is checked too.
   */
  secretPlaces?: SecretPlace[];
}

export interface SecretPlace {
  /** What it is, for the message: "the emulator's state directory". */
  what: string;
  path: string;
}

const checkout = fileURLToPath(new URL("../../../..", import.meta.url));

export async function createSandboxGuests(options: SandboxGuestsOptions): Promise<SandboxGuests> {
  const problem = guestVisibleDataProblem([
    ...(options.secretPlaces ?? []),
    { what: "the program's checkout", path: checkout },
  ]);
  if (problem) throw new Error(problem);
  const rootDir = await ownGuestsFolder(options.guestsDir);
  return new SandboxGuests(options.registry, rootDir, {
    timings: options.timings ?? timingsFor("fast"),
    images: options.images ?? [],
    limits: options.limits ?? { ...defaultGuestLimitSettings },
    acceptUnlimited: options.acceptUnlimited === true,
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
}

/**
 * A VMI's guest gets what its VM would have: the memory the guest sees (memory.guest, which the VMI
 * webhook defaults from the request), its vCPUs as a CPU quota, and the cluster config's disk and
 * process limits.
 */
export function guestLimitsOf(vmi: KubeObject, config: ClusterConfig["guestLimits"]): GuestLimits {
  const memory =
    parseQuantity(field(vmi, "spec", "domain", "memory", "guest")) || guestMemoryRequestBytes(vmi);
  return {
    pids: config.pids,
    memoryBytes: Math.floor(memory > 0 ? memory : (parseQuantity(config.memory) ?? 0)),
    cpuMillicores: vcpuCount(vmi) * 1000,
    diskBytes: Math.floor(parseQuantity(config.disk) ?? 0),
  };
}

/**
 * Why guests must not start: a place with the emulator's secrets lies in a host folder that every
 * guest sees (sandbox.ts), where any student could read them. Run by an ordinary user, a guest is that
 * user; with npm start the kubeconfig's folder is the BFF's DATA_DIR, beside its session secret.
 * Undefined when none does. Paths are compared as the kernel resolves them, symlinks followed.
 */
export function guestVisibleDataProblem(places: SecretPlace[]): string | undefined {
  const visible = guestVisibleHostPaths().map((path) => ({ path, real: realPathOf(path) }));
  for (const place of places) {
    const given = resolve(place.path);
    const real = realPathOf(given);
    const seen = visible.find(({ real: folder }) => real === folder || real.startsWith(`${folder}/`));
    if (!seen) continue;
    const shown = real === given ? given : `${given}, which is ${real},`;
    return (
      `Refusing to start guests: ${place.what} ${shown} lies in ${seen.path}, which every guest sees ` +
      "(read-only), so any student could read what is kept there. Move it to a folder guests do not see " +
      "(they see /usr, /bin, /sbin, /lib* and a few files of /etc), e.g. /var/lib/lab-console or " +
      "/srv/lab-console (for npm start: DATA_DIR), or start the emulator without guests (--guests none)."
    );
  }
  return undefined;
}

/** The path with symlinks resolved, as far as it exists (a folder may not be made yet). */
function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realPathOf(parent), basename(path));
  }
}

/** The image of the VMI's first containerDisk volume, the disk it boots from. */
export function containerDiskImageOf(vmi: KubeObject): string | undefined {
  const volumes = field(vmi, "spec", "volumes");
  if (!Array.isArray(volumes)) return undefined;
  for (const volume of volumes) {
    const image = stringField(volume, "containerDisk", "image");
    if (image !== undefined) return image;
  }
  return undefined;
}

export class SandboxGuests implements GuestRuntime {
  private readonly guests = new GuestTable<Guest>();

  constructor(
    private readonly registry: Registry,
    private readonly rootDir: string,
    private readonly settings: {
      timings: Timings;
      images: readonly ExtraImage[];
      limits: ClusterConfig["guestLimits"];
      acceptUnlimited: boolean;
      sandbox?: SandboxBackend;
    },
  ) {}

  async start(vmi: KubeObject, events: GuestEvents): Promise<void> {
    const uid = vmi.metadata.uid;
    const userData = userDataOf(this.registry, vmi);
    const { timings, images, sandbox, limits, acceptUnlimited } = this.settings;
    const guest = await this.guests.boot(uid, events, () =>
      startGuest({
        name: vmi.metadata.name,
        rootDir: this.rootDir,
        image: guestImageFor(containerDiskImageOf(vmi), images),
        cloudInitDelayMs: runcmdDelayMs(timings, vmi.metadata.name),
        limits: guestLimitsOf(vmi, limits),
        acceptUnlimited,
        ...(userData === undefined ? {} : { userData }),
        ...(sandbox ? { sandbox } : {}),
      }),
    );
    guest.on("agent", (connected) => events.agent(connected));
    guest.on("exit", (reason) => {
      if (!this.guests.release(uid, guest)) return;
      events.exited("Failed", reason);
      void guest.kill().catch((error: unknown) => console.error("emulator: removing a dead guest:", error));
    });
    // As QEMU exits when its guest powers the machine off: the VMI succeeds, once the guest is gone.
    guest.on("poweroff", () => {
      if (!this.guests.release(uid, guest)) return;
      void guest
        .kill()
        .catch((error: unknown) => console.error("emulator: removing a powered-off guest:", error))
        .then(() => events.exited("Succeeded", "the guest powered off"));
    });
    if (guest.agentConnected) events.agent(true);
  }

  async stop(vmi: KubeObject): Promise<void> {
    await (await this.guests.take(vmi.metadata.uid))?.kill();
  }

  find(vmiUid: string): Guest | undefined {
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
