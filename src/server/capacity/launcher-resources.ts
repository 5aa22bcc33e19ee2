// What one session's virt-launcher pod asks of a node. Exact when virt-controller has published it:
// KubeVirt v1.9.0 turns VmiMemoryOverheadReport on by default and copies the overhead it added into the
// VMI's status.memory.memoryOverhead, which covers everything (network bindings, the cluster's
// additionalGuestMemoryOverheadRatio at the time, other architectures). Otherwise, and for VMs not
// created yet, computed the way virt-controller does (GetMemoryOverhead in
// pkg/hypervisor/kvm/hypervisorbackend.go and renderresources.go, KubeVirt v1.9.0) for the VMs Lab
// Console builds: x86, pod network with masquerade, VNC left on (video RAM counts while
// autoattachGraphicsDevice is unset), no probes, TPM or dedicated CPUs, serial console log on.
import { memoryToMi, type Lab } from "../../common/lab.ts";
import { parseQuantity } from "../../common/quantity.ts";
import type { VirtualMachine, VirtualMachineInstance } from "../kube/types.ts";

const mebibyte = 2 ** 20;

/**
 * virt-launcher-monitor 25 + virt-launcher 100 + virtlogd 25 + virtqemud 40 + qemu 30 (v1.9.0; the
 * 50Mi for qemu on KubeVirt's main branch is in no release yet).
 */
const fixedProcessesBytes = 220 * mebibyte;
const perVcpuBytes = 8 * mebibyte;
const ioThreadBytes = 8 * mebibyte;
const videoRamBytes = 32 * mebibyte;

/** The guest-console-log sidecar (serialconsolelog.go): counted by the scheduler like any container. */
export const consoleLogSidecar = { cpuMillis: 5, memoryBytes: 35_000_000 };

export const defaultCpuAllocationRatio = 10;

export interface VmShape {
  vcpus: number;
  /** The guest memory the pod holds: the memory request, else memory.guest. */
  memoryBytes: number;
  /**
   * Only memory.guest is set, no resources.requests.memory. KubeVirt sizes the page tables from the
   * request alone, so such a VM asks 8Mi less per 4Gi (4372Mi instead of 4380Mi). Lab Console sets both.
   */
  guestOnly?: boolean;
}

export interface PodRequest {
  cpuMillis: number;
  memoryBytes: number;
}

export interface OverheadSettings {
  /** From the KubeVirt CR; 10 when unset. */
  cpuAllocationRatio: number;
  /** spec.configuration.additionalGuestMemoryOverheadRatio: a multiplier on the overhead, e.g. "1.5". */
  additionalOverheadRatio?: string;
}

/** GetMemoryOverhead for the VMs Lab Console builds, in bytes. */
export function memoryOverheadBytes(vm: VmShape, additionalOverheadRatio?: string): number {
  // One page-table bit per 512 bytes of requested memory. Go rounds the request up to whole kilobytes
  // first and keeps the division's result in bytes: 4Gi gives 8,388,609 B.
  const pageTables = vm.guestOnly ? 0 : Math.floor((Math.ceil(vm.memoryBytes / 1000) * 1000) / 512);
  const overhead = pageTables + fixedProcessesBytes + perVcpuBytes * vm.vcpus + ioThreadBytes + videoRamBytes;
  return withOverheadRatio(overhead, additionalOverheadRatio);
}

/**
 * The ratio is applied last, as MultiplyMemory does: the overhead in kilobytes (rounded up) times
 * ratio - 1, truncated to whole kilobytes. A value that is no number is ignored, as virt-controller does.
 */
function withOverheadRatio(overhead: number, ratio: string | undefined): number {
  if (ratio === undefined || ratio === "") return overhead;
  const factor = Number(ratio);
  if (!Number.isFinite(factor)) return overhead;
  return overhead + Math.trunc(Math.ceil(overhead / 1000) * (factor - 1)) * 1000;
}

/** The overhead virt-controller added to the VMI's pod, as it reports it; undefined when it does not. */
export function publishedOverheadBytes(vmi: VirtualMachineInstance | undefined): number | undefined {
  // Read structurally: Lab Console's own VMI type leaves status.memory out.
  const status = vmi?.status as { memory?: { memoryOverhead?: unknown } } | undefined;
  const bytes = parseQuantity(status?.memory?.memoryOverhead);
  return bytes !== undefined && bytes >= 0 ? bytes : undefined;
}

/**
 * The compute container (vCPUs / cpuAllocationRatio; guest memory + overhead) plus the console-log
 * sidecar. The overhead is the published one when given, else the formula's.
 */
export function launcherPodRequest(
  vm: VmShape,
  settings: OverheadSettings,
  publishedOverhead?: number,
): PodRequest {
  const computeCpu = Math.ceil((vm.vcpus * 1000) / settings.cpuAllocationRatio);
  const overhead = publishedOverhead ?? memoryOverheadBytes(vm, settings.additionalOverheadRatio);
  return {
    cpuMillis: computeCpu + consoleLogSidecar.cpuMillis,
    memoryBytes: vm.memoryBytes + overhead + consoleLogSidecar.memoryBytes,
  };
}

export function vmShapeOfLab(lab: Lab): VmShape {
  return { vcpus: lab.vm.cpu, memoryBytes: memoryToMi(lab.vm.memory) * mebibyte };
}

/** The shape of a session VM as it was built; undefined for a VM whose size cannot be read. */
export function vmShapeOfVirtualMachine(vm: VirtualMachine): VmShape | undefined {
  const domain = vm.spec.template?.spec?.domain;
  const cpu = domain?.cpu;
  const requested = domain?.resources?.requests?.memory;
  const memory = requested ?? domain?.memory?.guest;
  if (!memory) return undefined;
  let memoryMi: number;
  try {
    memoryMi = memoryToMi(memory);
  } catch {
    return undefined;
  }
  const vcpus = (cpu?.cores ?? 1) * (cpu?.sockets ?? 1) * (cpu?.threads ?? 1);
  return { vcpus, memoryBytes: memoryMi * mebibyte, ...(requested ? {} : { guestOnly: true }) };
}
