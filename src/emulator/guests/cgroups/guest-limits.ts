// What one guest may take of the machine it runs on. A real VM has a fixed memory, vCPU count and
// disk size from its spec, and a fork bomb in it takes down only that VM; a guest here shares the
// host's kernel, so the emulator holds it to the same: processes, memory and CPU through a cgroup of
// its own (guest-cgroups.ts), the disk as a size-limited tmpfs (guest-setup.py).
import { parseQuantity } from "../../../common/quantity.ts";
import { defaultGuestLimitSettings } from "../../cluster/cluster-config.ts";

export interface GuestLimits {
  /** Processes and threads at once (pids.max, and RLIMIT_NPROC for the guest's users). */
  pids: number;
  /** The guest's memory, as its VM's spec gives it. */
  memoryBytes: number;
  /** CPU time as a quota: 1000 is one core. */
  cpuMillicores: number;
  /** Home, /tmp, /var, /usr/local and /root together. */
  diskBytes: number;
}

export const defaultGuestLimits: GuestLimits = {
  pids: defaultGuestLimitSettings.pids,
  memoryBytes: parseQuantity(defaultGuestLimitSettings.memory) ?? 0,
  cpuMillicores: 1000,
  diskBytes: parseQuantity(defaultGuestLimitSettings.disk) ?? 0,
};

/**
 * Set to 1 to start guests where they cannot get cgroup limits (no delegated cgroup for an ordinary
 * user, no writable cgroup file system as root): only for guests you trust.
 */
export const UNLIMITED_GUESTS_ENV = "LAB_EMULATOR_UNLIMITED_GUESTS";

/**
 * The memory cgroup's limit. The disk is a tmpfs whose pages are charged to the cgroup of whoever
 * writes them, so the cgroup holds the guest's memory and its disk: a full disk must not leave the
 * guest without the memory its spec gives it.
 */
export function cgroupMemoryBytes(limits: GuestLimits): number {
  return limits.memoryBytes + limits.diskBytes;
}
