// The memory a virt-launcher pod asks for, as KubeVirt v1.9.0's virt-controller computes it:
// GetMemoryOverhead (pkg/hypervisor/kvm/hypervisorbackend.go) for what QEMU and KubeVirt's own
// processes need on top of the guest, the memory rules of pkg/virt-controller/services/renderresources.go
// for the guest part, and the overhead virt-controller publishes in the pod annotation
// kubevirt.io/memory-overhead-bytes (template.go) and copies into the VMI's status.memory.memoryOverhead
// (pkg/virt-controller/watch/vmi/lifecycle.go, updateMemoryOverheadStatusFromPod).
import { field, isJsonObject, type KubeObject } from "./objects.ts";
import { formatBytes, parseQuantity } from "../../common/quantity.ts";

const mebibyte = 2 ** 20;

/**
 * The ps RSS KubeVirt v1.9.0 budgets per launcher process: virt-launcher-monitor 25Mi, virt-launcher
 * 100Mi, virtlogd 25Mi, virtqemud 40Mi, qemu 30Mi. (Upstream main raised qemu to 50Mi after v1.9.0;
 * no release has that yet.)
 */
export const fixedProcessesBytes = (25 + 100 + 25 + 40 + 30) * mebibyte;
const perVcpuBytes = 8 * mebibyte;
const ioThreadBytes = 8 * mebibyte;
const videoRamBytes = 32 * mebibyte;

export const memoryOverheadAnnotation = "kubevirt.io/memory-overhead-bytes";

/** vCPUs as KubeVirt counts them: sockets x cores x threads, else the CPU limit or request, at least 1. */
export function vcpuCount(vmi: KubeObject): number {
  const cpu = field(vmi, "spec", "domain", "cpu");
  if (isJsonObject(cpu)) {
    const dimension = (key: string): number => {
      const value = cpu[key];
      return typeof value === "number" && value > 0 ? value : 1;
    };
    return dimension("sockets") * dimension("cores") * dimension("threads");
  }
  const resources = field(vmi, "spec", "domain", "resources");
  const fromResources =
    parseQuantity(field(resources, "limits", "cpu")) ?? parseQuantity(field(resources, "requests", "cpu"));
  return Math.max(1, Math.trunc(fromResources ?? 1));
}

/**
 * One page-table bit per 512 bytes, sized from resources.requests.memory only: a VMI that sets just
 * memory.guest gets none. Go rounds the request up to whole kilobytes (ScaledValue(Kilo)) before it
 * divides, and keeps the remainder of the division in bytes: 4Gi gives 8,388,609 B.
 */
function pageTableBytes(vmi: KubeObject): number {
  const requested = parseQuantity(field(vmi, "spec", "domain", "resources", "requests", "memory")) ?? 0;
  return Math.floor((Math.ceil(requested / 1000) * 1000) / 512);
}

/**
 * additionalGuestMemoryOverheadRatio, applied last as MultiplyMemory does: the overhead in kilobytes
 * (rounded up), times ratio - 1, truncated to whole kilobytes and added. A value that is no number is
 * ignored, as virt-controller logs and ignores it.
 */
function withOverheadRatio(overhead: number, ratio: string | undefined): number {
  if (ratio === undefined || ratio === "") return overhead;
  const factor = Number(ratio);
  if (!Number.isFinite(factor)) return overhead;
  return overhead + Math.trunc(Math.ceil(overhead / 1000) * (factor - 1)) * 1000;
}

/**
 * GetMemoryOverhead for x86 without VFIO, SEV, downward metrics or dedicated CPUs: page tables, the
 * fixed processes, 8Mi per vCPU, the IOThread, 32Mi of video RAM unless autoattachGraphicsDevice is
 * false (unset counts as true), exec probes, a TPM, then the cluster's overhead ratio.
 */
export function memoryOverheadBytes(vmi: KubeObject, additionalOverheadRatio?: string): number {
  const devices = field(vmi, "spec", "domain", "devices");
  let overhead = pageTableBytes(vmi) + fixedProcessesBytes + perVcpuBytes * vcpuCount(vmi) + ioThreadBytes;
  if (field(devices, "autoattachGraphicsDevice") !== false) overhead += videoRamBytes;
  const probes = ["livenessProbe", "readinessProbe"].filter(
    (probe) => field(vmi, "spec", probe, "exec") !== undefined,
  );
  if (probes.length > 0) overhead += (probes.length * 10 + 100) * mebibyte;
  if (field(devices, "tpm") !== undefined) overhead += 53 * mebibyte;
  return withOverheadRatio(overhead, additionalOverheadRatio);
}

/**
 * The guest part of the compute container's memory request (WithMemoryRequests): the VMI's memory
 * request; without one its limit; without either memory.guest (scaled by memoryOvercommit, 100 = none).
 * The overhead is added to this, never to the page-table basis, so a guest-only 4Gi VM with 2 vCPUs
 * asks 4Gi + 276Mi = 4372Mi.
 */
export function guestMemoryRequestBytes(vmi: KubeObject, memoryOvercommitPercent = 100): number {
  const domain = field(vmi, "spec", "domain");
  const request = parseQuantity(field(domain, "resources", "requests", "memory"));
  const limit = parseQuantity(field(domain, "resources", "limits", "memory"));
  // A zero request counts as none when a limit can stand in, but otherwise as given.
  if (limit !== undefined && limit > 0 && !request) return limit;
  if (request !== undefined) return request;
  const guest = parseQuantity(field(domain, "memory", "guest")) ?? 0;
  if (guest <= 0) return 0;
  return memoryOvercommitPercent === 100 ? guest : Math.trunc((guest * 100) / memoryOvercommitPercent);
}

/**
 * status.memory.memoryOverhead as virt-controller copies it from the pod's annotation: the integer
 * as a binary-SI quantity ("270Mi", or plain bytes when it is no whole number of Ki). Undefined when
 * the pod carries no parsable annotation, in which case virt-controller leaves the field alone.
 */
export function publishedMemoryOverhead(pod: KubeObject): string | undefined {
  const value = pod.metadata.annotations?.[memoryOverheadAnnotation];
  if (value === undefined || !/^-?\d+$/.test(value)) return undefined;
  return formatBytes(Number(value));
}
