// The virt-launcher pod virt-controller creates for each VMI: its resource requests (KubeVirt's
// memory-overhead formula, CPU from cpuAllocationRatio, the guest-console-log sidecar when serial
// console logging is on) and its labels and annotations, which network policies and `kubectl logs`
// selectors rely on.
import { createHash } from "node:crypto";
import { field, isJsonObject, stringField, type KubeObject } from "../objects.ts";
import { formatBytes, formatMillicores, parseMillicores, parseQuantity } from "../../common/quantity.ts";

const mebibyte = 2 ** 20;
// Sidecar requests: pkg/virt-controller/services/serialconsolelog.go.
export const consoleLogSidecar = {
  cpuMillis: 5,
  memoryBytes: 35e6,
  cpuLimitMillis: 15,
  memoryLimitBytes: 60e6,
};

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

/** The guest memory the pod must hold: the memory request, else guest memory (after the mutator's defaulting). */
export function requestedMemoryBytes(vmi: KubeObject): number {
  const domain = field(vmi, "spec", "domain");
  return (
    parseQuantity(field(domain, "resources", "requests", "memory")) ??
    parseQuantity(field(domain, "memory", "guest")) ??
    parseQuantity(field(domain, "resources", "limits", "memory")) ??
    0
  );
}

/**
 * KubeVirt's GetMemoryOverhead (pkg/hypervisor/kvm/hypervisorbackend.go) for x86 without VFIO, SEV
 * or dedicated CPUs: page tables, the fixed per-process overheads, 8Mi per vCPU, the IOThread, video RAM.
 */
export function memoryOverheadBytes(vmi: KubeObject, additionalOverheadRatio?: string): number {
  const domain = field(vmi, "spec", "domain");
  const requested = parseQuantity(field(domain, "resources", "requests", "memory")) ?? 0;
  // One bit per 512 bytes of guest RAM, computed in kilo-units as Kubernetes quantities do.
  const pageTables = Math.floor(Math.ceil(requested / 1000) / 512) * 1000;
  let overhead = pageTables;
  overhead += (25 + 100 + 25 + 40 + 50) * mebibyte; // virt-launcher-monitor, virt-launcher, virtlogd, virtqemud, qemu
  overhead += 8 * mebibyte * vcpuCount(vmi);
  overhead += 8 * mebibyte; // IOThread
  if (field(domain, "devices", "autoattachGraphicsDevice") !== false) overhead += 32 * mebibyte;
  const probes = ["livenessProbe", "readinessProbe"].filter(
    (probe) => field(vmi, "spec", probe, "exec") !== undefined,
  );
  if (probes.length > 0) overhead += (probes.length * 10 + 100) * mebibyte;
  if (field(domain, "devices", "tpm") !== undefined) overhead += 53 * mebibyte;
  const ratio = additionalOverheadRatio ? Number(additionalOverheadRatio) : NaN;
  if (Number.isFinite(ratio)) overhead += Math.trunc((overhead / 1000) * (ratio - 1)) * 1000;
  return overhead;
}

export interface LauncherRequests {
  cpuMillis: number;
  memoryBytes: number;
  overheadBytes: number;
}

/** The compute container's requests (renderresources.go): explicit CPU request, else vCPUs / cpuAllocationRatio. */
export function launcherRequests(
  vmi: KubeObject,
  cpuAllocationRatio: number,
  additionalOverheadRatio?: string,
): LauncherRequests {
  const explicitCpu = parseMillicores(field(vmi, "spec", "domain", "resources", "requests", "cpu"));
  const cpuMillis = explicitCpu ?? Math.ceil((vcpuCount(vmi) * 1000) / cpuAllocationRatio);
  const overheadBytes = memoryOverheadBytes(vmi, additionalOverheadRatio);
  return { cpuMillis, memoryBytes: requestedMemoryBytes(vmi) + overheadBytes, overheadBytes };
}

/**
 * Whether the VMI's serial console is logged, i.e. whether its pod gets the guest-console-log sidecar.
 * KubeVirt's isSerialConsoleLogEnabled (pkg/virt-controller/services/serialconsolelog.go and its
 * serialconsolelog_test.go in kubevirt/kubevirt): without a serial console (autoattachSerialConsole:
 * false) there is nothing to log, even with logSerialConsole: true; otherwise the VMI's
 * logSerialConsole wins when set, either way; otherwise it is on unless the KubeVirt CR has
 * spec.configuration.virtualMachineOptions.disableSerialConsoleLog (an empty object: present means off).
 */
export function serialConsoleLogEnabled(vmi: KubeObject, kubevirtConfiguration: unknown): boolean {
  const devices = field(vmi, "spec", "domain", "devices");
  if (field(devices, "autoattachSerialConsole") === false) return false;
  const perVmi = field(devices, "logSerialConsole");
  if (typeof perVmi === "boolean") return perVmi;
  // Go's IsSerialConsoleLogDisabled checks for a non-nil pointer, so an explicit null is still "on".
  const disabled = field(kubevirtConfiguration, "virtualMachineOptions", "disableSerialConsoleLog");
  return disabled === undefined || disabled === null;
}

function consoleLogContainer(vmi: KubeObject, image: string): Record<string, unknown> {
  return {
    name: "guest-console-log",
    image,
    command: ["/usr/bin/virt-tail"],
    args: ["--logfile", `/var/run/kubevirt-private/${vmi.metadata.uid}/virt-serial0-log`],
    restartPolicy: "Always",
    resources: {
      requests: { cpu: formatMillicores(consoleLogSidecar.cpuMillis), memory: "35M" },
      limits: { cpu: formatMillicores(consoleLogSidecar.cpuLimitMillis), memory: "60M" },
    },
  };
}

export interface LauncherPodOptions {
  kubevirtVersion: string;
  /** From serialConsoleLogEnabled: the pod gets the guest-console-log sidecar. */
  serialConsoleLog: boolean;
}

/** virt-launcher's label for the VMI name: names over 63 characters are shortened with a hash. */
function vmiIdLabel(name: string): string {
  if (name.length <= 63) return name;
  return `${name.slice(0, 54)}-${createHash("sha1").update(name).digest("hex").slice(0, 8)}`;
}

export function buildLauncherPod(
  vmi: KubeObject,
  requests: LauncherRequests,
  options: LauncherPodOptions,
): Record<string, unknown> {
  const name = vmi.metadata.name;
  const hostname = (stringField(vmi, "spec", "hostname") ?? name.split(".")[0] ?? name).slice(0, 63);
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(vmi.metadata.annotations ?? {})) {
    if (
      !key.startsWith("kubectl.kubernetes.io") &&
      !key.startsWith("kubevirt.io/latest-observed-api-version") &&
      !key.startsWith("kubevirt.io/storage-observed-api-version")
    ) {
      annotations[key] = value;
    }
  }
  const launcherImage = `quay.io/kubevirt/virt-launcher:${options.kubevirtVersion}`;
  return {
    metadata: {
      generateName: `virt-launcher-${name}-`,
      namespace: vmi.metadata.namespace,
      labels: {
        ...vmi.metadata.labels,
        "kubevirt.io": "virt-launcher",
        "kubevirt.io/created-by": vmi.metadata.uid,
        "vm.kubevirt.io/name": hostname,
        "vmi.kubevirt.io/id": vmiIdLabel(name),
      },
      annotations: {
        ...annotations,
        "kubevirt.io/domain": name,
        "kubectl.kubernetes.io/default-container": "compute",
        "kubevirt.io/migrationTransportUnix": "true",
        "kubevirt.io/memory-overhead-bytes": String(requests.overheadBytes),
        "descheduler.alpha.kubernetes.io/request-evict-only": "",
      },
      ownerReferences: [
        {
          apiVersion: "kubevirt.io/v1",
          kind: "VirtualMachineInstance",
          name,
          uid: vmi.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      hostname,
      restartPolicy: "Never",
      serviceAccountName: "default",
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 210,
      nodeSelector: { "kubevirt.io/schedulable": "true" },
      // Since KubeVirt 1.6 a native sidecar (an init container that keeps running); the scheduler
      // counts its requests, so a pod without it asks 5m / 35M less.
      ...(options.serialConsoleLog ? { initContainers: [consoleLogContainer(vmi, launcherImage)] } : {}),
      containers: [
        {
          name: "compute",
          image: launcherImage,
          command: [
            "/usr/bin/virt-launcher-monitor",
            "--qemu-timeout",
            "321s",
            "--name",
            name,
            "--uid",
            vmi.metadata.uid,
            "--namespace",
            vmi.metadata.namespace,
          ],
          resources: {
            requests: {
              cpu: formatMillicores(requests.cpuMillis),
              memory: formatBytes(requests.memoryBytes),
              "ephemeral-storage": "50M",
              "devices.kubevirt.io/kvm": "1",
              "devices.kubevirt.io/tun": "1",
              "devices.kubevirt.io/vhost-net": "1",
            },
            limits: {
              "devices.kubevirt.io/kvm": "1",
              "devices.kubevirt.io/tun": "1",
              "devices.kubevirt.io/vhost-net": "1",
            },
          },
        },
      ],
    },
    status: { phase: "Pending", qosClass: "Burstable" },
  };
}
