// The virt-launcher pod virt-controller creates for each VMI: its resource requests (memory as in
// cluster/memory-overhead.ts, CPU from cpuAllocationRatio, the guest-console-log sidecar when serial console
// logging is on) and its labels and annotations, which network policies and `kubectl logs` selectors
// rely on.
import { createHash } from "node:crypto";
import { field, stringField, type KubeObject } from "../cluster/objects.ts";
import { formatBytes, formatMillicores, parseMillicores } from "../../common/quantity.ts";
import {
  guestMemoryRequestBytes,
  memoryOverheadAnnotation,
  memoryOverheadBytes,
  vcpuCount,
} from "../cluster/memory-overhead.ts";

// Sidecar requests: pkg/virt-controller/services/serialconsolelog.go.
export const consoleLogSidecar = {
  cpuMillis: 5,
  memoryBytes: 35e6,
  cpuLimitMillis: 15,
  memoryLimitBytes: 60e6,
};

export interface LauncherRequests {
  cpuMillis: number;
  memoryBytes: number;
  overheadBytes: number;
}

/**
 * The compute container's requests (renderresources.go): an explicit CPU request, else vCPUs /
 * cpuAllocationRatio; memory is the guest part plus the overhead (WithMemoryOverhead).
 */
export function launcherRequests(
  vmi: KubeObject,
  cpuAllocationRatio: number,
  additionalOverheadRatio?: string,
): LauncherRequests {
  const explicitCpu = parseMillicores(field(vmi, "spec", "domain", "resources", "requests", "cpu"));
  const cpuMillis = explicitCpu ?? Math.ceil((vcpuCount(vmi) * 1000) / cpuAllocationRatio);
  const overheadBytes = memoryOverheadBytes(vmi, additionalOverheadRatio);
  return { cpuMillis, memoryBytes: guestMemoryRequestBytes(vmi) + overheadBytes, overheadBytes };
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
        // VmiMemoryOverheadReport is Beta, so on, in v1.9.0: the exact overhead, as an integer.
        [memoryOverheadAnnotation]: String(requests.overheadBytes),
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
