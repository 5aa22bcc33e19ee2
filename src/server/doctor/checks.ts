// The doctor's checks, each a pure function of what was read from the cluster, so every verdict can
// be tested without one. Each says ok, warn or fail, what it found, why it matters and how to fix it.
import type { DoctorCheck } from "../../common/operations-api.ts";
import type { KubeVirt, Namespace, Node } from "../kube/cluster-facts.ts";
import {
  consoleLogSidecar,
  defaultCpuAllocationRatio,
  launcherPodRequest,
} from "../capacity/launcher-resources.ts";
import { kvmDevice } from "../capacity/node-room.ts";
import { parseQuantity } from "../../common/quantity.ts";
import { describePermission, type ForbiddenPermission, type Permission } from "./permissions.ts";
import {
  atLeast,
  kubernetesImageVolumeGate,
  kubeVirtImageVolumeGate,
  parseVersion,
  runtimeSupportsImageVolumes,
} from "./versions.ts";

/** A fact read from the cluster, or why it could not be read. */
export type Fact<T> = { ok: true; value: T } | { ok: false; error: string };

export interface ClusterReadings {
  /** Where the VMs run (LAB_NAMESPACE). */
  vmNamespace: string;
  /** Where the replicas keep their leases; undefined when coordination is off. */
  leaseNamespace?: string;
  kubernetesVersion: Fact<string>;
  kubeVirt: Fact<KubeVirt | undefined>;
  nodes: Fact<Node[]>;
  namespace: Fact<Namespace | undefined>;
  apiServerMetrics: Fact<string>;
  required: Fact<{ permission: Permission; allowed: boolean }[]>;
  forbidden: Fact<{ permission: ForbiddenPermission; allowed: boolean }[]>;
}

type Check = (readings: ClusterReadings) => DoctorCheck;

function result(
  id: string,
  title: string,
  status: DoctorCheck["status"],
  summary: string,
  details: string[] = [],
  fix: string | null = null,
): DoctorCheck {
  return { id, title, status, summary, details, fix };
}

export const clusterCheck: Check = ({ kubernetesVersion }) => {
  const title = "The cluster answers";
  if (!kubernetesVersion.ok) {
    return result(
      "cluster",
      title,
      "fail",
      `The Kubernetes API does not answer: ${kubernetesVersion.error}`,
      ["Without the API nothing else can be checked, and no session can start."],
      "Check the cluster the console is pointed at (LAB_KUBECONFIG or KUBECONFIG; in a pod, its service " +
        "account) with `kubectl version`, and that the network lets the console reach the API server.",
    );
  }
  return result("cluster", title, "ok", `Kubernetes ${kubernetesVersion.value} answers.`);
};

export const kubeVirtCheck: Check = ({ kubeVirt }) => {
  const title = "KubeVirt is installed";
  if (!kubeVirt.ok)
    return result(
      "kubevirt",
      title,
      "fail",
      `The KubeVirt custom resource could not be read: ${kubeVirt.error}`,
    );
  const cr = kubeVirt.value;
  if (!cr) {
    return result(
      "kubevirt",
      title,
      "fail",
      "KubeVirt is not installed: the cluster has no KubeVirt custom resource.",
      [],
      "Install KubeVirt (the operator, then a KubeVirt resource): https://kubevirt.io/user-guide/cluster_admin/installation/",
    );
  }
  const version = cr.status?.observedKubeVirtVersion ?? "an unknown version";
  const where = `${cr.metadata.namespace ?? ""}/${cr.metadata.name ?? ""}`;
  if (cr.status?.phase !== "Deployed") {
    return result(
      "kubevirt",
      title,
      "warn",
      `KubeVirt ${version} is installed but not ready (phase ${cr.status?.phase ?? "unknown"}).`,
      [`KubeVirt resource: ${where}`],
      `Look at \`kubectl -n ${cr.metadata.namespace ?? "kubevirt"} get kubevirt,pods\` until the phase is Deployed.`,
    );
  }
  return result("kubevirt", title, "ok", `KubeVirt ${version} is deployed.`, [`KubeVirt resource: ${where}`]);
};

export const imageVolumeCheck: Check = ({ kubeVirt, kubernetesVersion, apiServerMetrics, nodes }) => {
  const title = "ImageVolume: KubeVirt, Kubernetes and the container runtime agree";
  const cr = kubeVirt.ok ? kubeVirt.value : undefined;
  const kvVersion = parseVersion(cr?.status?.observedKubeVirtVersion);
  const k8sVersion = parseVersion(kubernetesVersion.ok ? kubernetesVersion.value : undefined);
  if (!cr || !kvVersion || !k8sVersion) {
    return result(
      "image-volume",
      title,
      "warn",
      "Not checked: the KubeVirt and Kubernetes versions are not both known (see the checks above).",
    );
  }
  const kubeVirtGate = kubeVirtImageVolumeGate(cr, kvVersion);
  const details = [
    `KubeVirt ${cr.status?.observedKubeVirtVersion}: ImageVolume is ${onOff(kubeVirtGate.enabled)} because ${kubeVirtGate.because}.`,
  ];
  if (!kubeVirtGate.enabled) {
    return result(
      "image-volume",
      title,
      "ok",
      "KubeVirt does not use image volumes: container disks are copied in by helper containers, which works everywhere.",
      details,
    );
  }

  const k8sGate = kubernetesImageVolumeGate(
    apiServerMetrics.ok ? apiServerMetrics.value : undefined,
    k8sVersion,
  );
  details.push(
    `Kubernetes ${kubernetesVersion.ok ? kubernetesVersion.value : ""}: ImageVolume is ${onOff(k8sGate.enabled)} because ${k8sGate.because}.`,
  );
  if (!apiServerMetrics.ok)
    details.push(`The API server's /metrics could not be read: ${apiServerMetrics.error}`);
  const disableFix = disableInKubeVirtFix(cr, atLeast(kvVersion, 1, 8));

  if (!k8sGate.enabled) {
    const why = [
      "With KubeVirt's gate on, virt-controller mounts every containerDisk as a pod image volume. With " +
        "Kubernetes' gate off, the API server silently drops those volumes and their mounts from the launcher " +
        "pod: the pod is accepted without any warning, and then fails with " +
        '`exec: "/container-disk-binary/usr/bin/container-disk": no such file or directory`. No VM starts.',
    ];
    if (k8sGate.source === "version") {
      return result(
        "image-volume",
        title,
        "warn",
        "KubeVirt mounts container disks as image volumes, and Kubernetes' ImageVolume gate is probably off.",
        [...details, ...why, "The API server's gate could not be read, so this is judged from its version."],
        `${disableFix}\nOr let the console read /metrics (see deploy/base) so the doctor can tell for sure.`,
      );
    }
    return result(
      "image-volume",
      title,
      "fail",
      "KubeVirt mounts container disks as image volumes, but Kubernetes' ImageVolume gate is off: no VM will start.",
      [...details, ...why],
      `${disableFix}\nOr turn on Kubernetes' ImageVolume feature gate (API server and kubelets) on nodes whose ` +
        "runtime supports it (containerd 2.1+ or CRI-O 1.31+).",
    );
  }

  // Only the API server's gate is in sight: the kubelets' gate (and how the runtimes are configured)
  // would need nodes/proxy to read, which is root on every node and must not be granted (see
  // permissions.ts). So no text may claim more than "the API server's gate is on".
  const apiServerGateOn =
    k8sGate.source === "metrics"
      ? "The API server's ImageVolume gate is on"
      : "The API server's ImageVolume gate should be on (judged from its version)";
  const notVisible =
    "The kubelets' ImageVolume gate and the container runtimes' configuration cannot be checked from here: " +
    "reading a kubelet needs nodes/proxy, which is root on every node. If launcher pods fail to mount their " +
    "container disks, check the kubelets' --feature-gates (or featureGates in their configuration file).";
  if (!nodes.ok) {
    return result(
      "image-volume",
      title,
      "warn",
      `${apiServerGateOn}; the nodes' container runtimes could not be read.`,
      [...details, nodes.error, notVisible],
    );
  }
  const tooOld = nodes.value.filter(
    (node) => runtimeSupportsImageVolumes(node.status?.nodeInfo?.containerRuntimeVersion) === false,
  );
  const unknown = nodes.value.filter(
    (node) => runtimeSupportsImageVolumes(node.status?.nodeInfo?.containerRuntimeVersion) === undefined,
  );
  const runtimes = (list: Node[]) =>
    list
      .map(
        (node) =>
          `${node.metadata.name} (${node.status?.nodeInfo?.containerRuntimeVersion ?? "unknown runtime"})`,
      )
      .join(", ");
  if (tooOld.length > 0) {
    return result(
      "image-volume",
      title,
      "fail",
      `${apiServerGateOn}, but ${tooOld.length} node(s) run a container runtime too old for image volumes: VMs placed there will not start.`,
      [
        ...details,
        `Too old: ${runtimes(tooOld)}. Image volumes need containerd 2.1 or newer (or CRI-O 1.31+).`,
        notVisible,
      ],
      `Upgrade containerd on those nodes, or: ${disableFix}`,
    );
  }
  if (unknown.length > 0) {
    return result(
      "image-volume",
      title,
      "warn",
      `${apiServerGateOn}; some nodes' container runtimes are not known to support image volumes.`,
      [
        ...details,
        `Unknown: ${runtimes(unknown)}. Image volumes need containerd 2.1+ or CRI-O 1.31+.`,
        notVisible,
      ],
    );
  }
  return result(
    "image-volume",
    title,
    "ok",
    `${apiServerGateOn} and every node's container runtime is recent enough for image volumes; the kubelets' gate cannot be checked from here.`,
    [...details, notVisible],
  );
};

function disableInKubeVirtFix(cr: KubeVirt, hasDisabledList: boolean): string {
  const name = cr.metadata.name ?? "kubevirt";
  const namespace = cr.metadata.namespace ?? "kubevirt";
  const explicit = cr.spec?.configuration?.developerConfiguration?.featureGates?.includes("ImageVolume");
  const steps: string[] = [];
  if (explicit) {
    steps.push(
      `Remove ImageVolume from spec.configuration.developerConfiguration.featureGates: \`kubectl -n ${namespace} edit kubevirt ${name}\`.`,
    );
  }
  if (hasDisabledList) {
    steps.push(
      `Turn KubeVirt's gate off (back to copying container disks): add ImageVolume to ` +
        `spec.configuration.developerConfiguration.disabledFeatureGates, for example\n` +
        `  kubectl -n ${namespace} patch kubevirt ${name} --type merge -p ` +
        `'{"spec":{"configuration":{"developerConfiguration":{"disabledFeatureGates":["ImageVolume"]}}}}'\n` +
        `(that replaces the list: keep any gates already in it). Check it again after every KubeVirt upgrade.`,
    );
  }
  return steps.join("\n");
}

export const kvmCheck: Check = ({ nodes }) => {
  const title = "Nodes with KVM";
  if (!nodes.ok) return result("kvm", title, "fail", `The nodes could not be read: ${nodes.error}`);
  const withKvm = nodes.value.filter(
    (node) => (parseQuantity(node.status?.allocatable?.[kvmDevice]) ?? 0) > 0,
  );
  const names = (list: Node[]) => list.map((node) => node.metadata.name).join(", ");
  if (withKvm.length === 0) {
    return result(
      "kvm",
      title,
      "fail",
      `No node exposes ${kvmDevice}: VMs can be created but never scheduled.`,
      [`${nodes.value.length} node(s): ${names(nodes.value) || "none"}.`],
      "Enable hardware virtualization (VT-x/AMD-V) on the nodes, or nested virtualization on cloud VMs; " +
        "check that virt-handler runs on them (`kubectl -n kubevirt get pods -o wide`) and that " +
        "`kubectl get nodes -o jsonpath='{..allocatable}'` lists devices.kubevirt.io/kvm.",
    );
  }
  const without = nodes.value.filter((node) => !withKvm.includes(node));
  return result(
    "kvm",
    title,
    "ok",
    `${withKvm.length} of ${nodes.value.length} node(s) expose ${kvmDevice}.`,
    [
      `With KVM: ${names(withKvm)}.`,
      ...(without.length > 0 ? [`Without: ${names(without)} (VMs do not go there).`] : []),
    ],
  );
};

const enforceLabel = "pod-security.kubernetes.io/enforce";

export const vmNamespaceCheck: Check = ({ namespace, vmNamespace }) => {
  const title = "The VM namespace admits virt-launcher pods";
  const labelFix = `kubectl label namespace ${vmNamespace} ${enforceLabel}=privileged --overwrite`;
  if (!namespace.ok) {
    return result(
      "vm-namespace",
      title,
      "fail",
      `The namespace ${vmNamespace} could not be read: ${namespace.error}`,
    );
  }
  if (!namespace.value) {
    return result(
      "vm-namespace",
      title,
      "fail",
      `The namespace ${vmNamespace} (LAB_NAMESPACE) does not exist: no session can start.`,
      [],
      `Apply deploy/base, or: kubectl create namespace ${vmNamespace} && ${labelFix}`,
    );
  }
  const level = namespace.value.metadata.labels?.[enforceLabel];
  const why =
    "virt-launcher pods need privileges (KVM and tun devices, extra capabilities), which only the privileged Pod Security level admits.";
  if (level === "privileged") {
    return result("vm-namespace", title, "ok", `${vmNamespace} enforces the privileged Pod Security level.`, [
      why,
    ]);
  }
  if (level === undefined) {
    return result(
      "vm-namespace",
      title,
      "warn",
      `${vmNamespace} has no ${enforceLabel} label: the cluster's default level applies.`,
      [
        why,
        "If the cluster's default is baseline or restricted, launcher pods are refused and VMs never start.",
      ],
      labelFix,
    );
  }
  return result(
    "vm-namespace",
    title,
    "fail",
    `${vmNamespace} enforces the ${level} Pod Security level: launcher pods are refused and no VM starts.`,
    [why],
    labelFix,
  );
};

export const permissionsCheck: Check = ({ required, forbidden, vmNamespace, leaseNamespace }) => {
  const title = "The console's own permissions";
  if (!required.ok || !forbidden.ok) {
    const error = !required.ok ? required.error : !forbidden.ok ? forbidden.error : "";
    return result(
      "permissions",
      title,
      "fail",
      `The API server would not answer access reviews: ${error}`,
      [],
      "The console needs `create selfsubjectaccessreviews.authorization.k8s.io` (every authenticated user has it by default).",
    );
  }
  const missing = required.value.filter((entry) => !entry.allowed);
  const dangerous = forbidden.value.filter((entry) => entry.allowed && entry.permission.severity === "fail");
  const tooMuch = forbidden.value.filter((entry) => entry.allowed && entry.permission.severity === "warn");
  const details = [
    ...missing.map(
      ({ permission }) =>
        `Missing: ${describePermission(permission)}${scopeOf(permission, { vmNamespace, leaseNamespace })} (${permission.why}).`,
    ),
    ...dangerous.map(
      ({ permission }) =>
        `Allowed but must not be: ${describePermission(permission)}${scopeOf(permission, { vmNamespace })}. ${permission.why}`,
    ),
    ...tooMuch.map(
      ({ permission }) =>
        `Allowed but not needed: ${describePermission(permission)}${scopeOf(permission, { vmNamespace })} (${permission.why}).`,
    ),
  ];
  const adminHint =
    "If the doctor ran with an administrator's kubeconfig instead of the console's own, run it as the console: " +
    "`kubectl -n lab-console exec deploy/lab-console -- npm run doctor`, or open the instructor page.";
  if (dangerous.length > 0) {
    return result(
      "permissions",
      title,
      "fail",
      `The console's credentials may ${whatTheyMay(
        dangerous.map((entry) => entry.permission),
        vmNamespace,
      )}: a path to root on the nodes.`,
      details,
      `Bind the console's service account only to the roles in deploy/base (rbac-sessions.yaml, rbac-cluster.yaml, rbac-leases.yaml) and remove every other binding ` +
        `(\`kubectl get rolebindings,clusterrolebindings -A -o wide | grep lab-console\`).\n${adminHint}`,
    );
  }
  if (missing.length > 0) {
    return result(
      "permissions",
      title,
      "fail",
      `The console lacks ${missing.length} permission(s) it needs.`,
      details,
      "Apply the RBAC in deploy/base (rbac-sessions.yaml, rbac-cluster.yaml, rbac-leases.yaml) to the console's service account.",
    );
  }
  if (tooMuch.length > 0) {
    return result(
      "permissions",
      title,
      "warn",
      "The console has everything it needs, and more than it should.",
      details,
      adminHint,
    );
  }
  return result(
    "permissions",
    title,
    "ok",
    `Everything the console needs is allowed (${required.value.length} checks); it cannot create, exec into or attach to pods in ${vmNamespace}, nor reach the kubelets' API.`,
  );
};

/** "create pods, exec into pods in lab-sessions and reach the kubelets' API (nodes/proxy) cluster-wide". */
function whatTheyMay(permissions: ForbiddenPermission[], vmNamespace: string): string {
  const whats = (scope: ForbiddenPermission["scope"]) => [
    ...new Set(permissions.filter((permission) => permission.scope === scope).map(({ what }) => what)),
  ];
  const inNamespace = whats("vm-namespace");
  const clusterWide = whats("cluster");
  return [
    ...(inNamespace.length > 0 ? [`${inNamespace.join(", ")} in ${vmNamespace}`] : []),
    ...(clusterWide.length > 0 ? [`${clusterWide.join(", ")} cluster-wide`] : []),
  ].join(" and ");
}

function scopeOf(
  permission: Permission | ForbiddenPermission,
  namespaces: { vmNamespace: string; leaseNamespace?: string },
): string {
  if (permission.scope === "cluster") return " cluster-wide";
  return ` in ${permission.scope === "lease-namespace" ? namespaces.leaseNamespace : namespaces.vmNamespace}`;
}

export const cpuAllocationRatioCheck: Check = ({ kubeVirt }) => {
  const title = "CPU allocation ratio";
  const cr = kubeVirt.ok ? kubeVirt.value : undefined;
  if (!cr)
    return result(
      "cpu-allocation-ratio",
      title,
      "warn",
      "Not known: the KubeVirt resource could not be read.",
    );
  const configured = cr.spec?.configuration?.developerConfiguration?.cpuAllocationRatio;
  const ratio = typeof configured === "number" && configured > 0 ? configured : defaultCpuAllocationRatio;
  const example = launcherPodRequest({ vcpus: 2, memoryBytes: 4 * 2 ** 30 }, { cpuAllocationRatio: ratio });
  return result(
    "cpu-allocation-ratio",
    title,
    "ok",
    `cpuAllocationRatio is ${ratio}${configured === undefined ? " (the default)" : ""}: each vCPU requests ${Math.ceil(1000 / ratio)}m of a node's CPU.`,
    [
      `A 2 vCPU / 4Gi lab VM's compute container requests ${example.cpuMillis - consoleLogSidecar.cpuMillis}m CPU and ` +
        `${Math.round((example.memoryBytes - consoleLogSidecar.memoryBytes) / 2 ** 20)}Mi memory, its console-log ` +
        "sidecar 5m and 35M; the capacity estimate uses the same numbers.",
    ],
  );
};

export const serialConsoleLogCheck: Check = ({ kubeVirt }) => {
  const title = "Serial console log";
  const cr = kubeVirt.ok ? kubeVirt.value : undefined;
  if (!cr)
    return result("serial-console-log", title, "warn", "Not known: the KubeVirt resource could not be read.");
  const disabled = cr.spec?.configuration?.virtualMachineOptions?.disableSerialConsoleLog !== undefined;
  return result(
    "serial-console-log",
    title,
    "ok",
    disabled
      ? "Off cluster-wide (virtualMachineOptions.disableSerialConsoleLog); Lab Console's VMs turn it on for themselves."
      : "On: every VM's serial output is kept in its guest-console-log container.",
    [
      "Lab Console's VMs set logSerialConsole: true, which overrides the cluster's default, so boot output " +
        "written while nobody watched can be shown. Each VM's sidecar requests 5m CPU and 35M memory.",
    ],
  );
};

export const allChecks: readonly Check[] = [
  clusterCheck,
  kubeVirtCheck,
  imageVolumeCheck,
  kvmCheck,
  vmNamespaceCheck,
  permissionsCheck,
  cpuAllocationRatioCheck,
  serialConsoleLogCheck,
];

function onOff(enabled: boolean): string {
  return enabled ? "on" : "off";
}
