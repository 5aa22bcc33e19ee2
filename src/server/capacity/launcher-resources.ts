// What one session's virt-launcher pod asks of a node, computed the way virt-controller does
// (GetMemoryOverhead and renderresources.go, docs/kubevirt-reference.md section 11) for the VMs Lab
// Console builds: x86, pod network with masquerade, VNC left on, no probes, TPM or dedicated CPUs,
// serial console log on.
//
// WARNING: the formula counts 32Mi of video RAM, which gives 4400Mi for a 2 vCPU / 4Gi VM; the field
// notes measured 4372Mi on a real cluster. The estimate errs on the side of refusing a little early.
import { memoryToMi, type Lab } from "../../common/lab.ts";
import type { VirtualMachine } from "../kube/types.ts";

const mebibyte = 2 ** 20;

/** virt-launcher-monitor 25 + virt-launcher 100 + virtlogd 25 + virtqemud 40 + qemu 50. */
const fixedProcessesBytes = 240 * mebibyte;
const perVcpuBytes = 8 * mebibyte;
const ioThreadBytes = 8 * mebibyte;
const videoRamBytes = 32 * mebibyte;

/** The guest-console-log sidecar (serialconsolelog.go): counted by the scheduler like any container. */
export const consoleLogSidecar = { cpuMillis: 5, memoryBytes: 35_000_000 };

export const defaultCpuAllocationRatio = 10;

export interface VmShape {
  vcpus: number;
  /** The guest memory request. */
  memoryBytes: number;
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

export function memoryOverheadBytes(vm: VmShape, additionalOverheadRatio?: string): number {
  // One page-table bit per 512 bytes of guest RAM, in kilo-units as Kubernetes quantities compute it.
  const pageTables = Math.floor(Math.ceil(vm.memoryBytes / 1000) / 512) * 1000;
  let overhead = pageTables + fixedProcessesBytes + perVcpuBytes * vm.vcpus + ioThreadBytes + videoRamBytes;
  const ratio = additionalOverheadRatio === undefined ? NaN : Number(additionalOverheadRatio);
  if (Number.isFinite(ratio)) overhead += Math.trunc((overhead / 1000) * (ratio - 1)) * 1000;
  return overhead;
}

/** The compute container (vCPUs / cpuAllocationRatio; guest memory + overhead) plus the console-log sidecar. */
export function launcherPodRequest(vm: VmShape, settings: OverheadSettings): PodRequest {
  const computeCpu = Math.ceil((vm.vcpus * 1000) / settings.cpuAllocationRatio);
  const computeMemory = vm.memoryBytes + memoryOverheadBytes(vm, settings.additionalOverheadRatio);
  return {
    cpuMillis: computeCpu + consoleLogSidecar.cpuMillis,
    memoryBytes: computeMemory + consoleLogSidecar.memoryBytes,
  };
}

export function vmShapeOfLab(lab: Lab): VmShape {
  return { vcpus: lab.vm.cpu, memoryBytes: memoryToMi(lab.vm.memory) * mebibyte };
}

/** The shape of a session VM as it was built; undefined for a VM whose size cannot be read. */
export function vmShapeOfVirtualMachine(vm: VirtualMachine): VmShape | undefined {
  const domain = vm.spec.template?.spec?.domain;
  const cpu = domain?.cpu;
  const memory = domain?.resources?.requests?.memory ?? domain?.memory?.guest;
  if (!memory) return undefined;
  let memoryMi: number;
  try {
    memoryMi = memoryToMi(memory);
  } catch {
    return undefined;
  }
  const vcpus = (cpu?.cores ?? 1) * (cpu?.sockets ?? 1) * (cpu?.threads ?? 1);
  return { vcpus, memoryBytes: memoryMi * mebibyte };
}
