// The doctor's checks, each a pure function of what was read from the cluster, so every verdict can
// be tested without one. Each says ok, warn or fail, what it found, why it matters and how to fix it,
// in sentences by key (common/doctor-texts.ts) that the SPA says in the reader's language.
import {
  renderDoctorText,
  say,
  verbatim,
  type DoctorText,
  type DoctorTextKey,
} from "../../common/doctor-texts.ts";
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

/** A check's verdict, its English rendered from the sentences for `npm run doctor` and API clients. */
export function result(
  id: string,
  title: DoctorText,
  status: DoctorCheck["status"],
  summary: DoctorText,
  details: DoctorText[] = [],
  fix: DoctorText[] = [],
): DoctorCheck {
  return {
    id,
    title: renderDoctorText(title),
    status,
    summary: renderDoctorText(summary),
    details: details.map((detail) => renderDoctorText(detail)),
    fix: fix.length > 0 ? fix.map((line) => renderDoctorText(line)).join("\n") : null,
    texts: { title, summary, details, fix },
  };
}

export const clusterCheck: Check = ({ kubernetesVersion }) => {
  const title = say("clusterTitle");
  if (!kubernetesVersion.ok) {
    return result(
      "cluster",
      title,
      "fail",
      say("clusterNoAnswer", { error: kubernetesVersion.error }),
      [say("clusterNoAnswerWhy")],
      [say("clusterFix")],
    );
  }
  return result("cluster", title, "ok", say("clusterOk", { version: kubernetesVersion.value }));
};

export const kubeVirtCheck: Check = ({ kubeVirt }) => {
  const title = say("kubeVirtTitle");
  if (!kubeVirt.ok)
    return result("kubevirt", title, "fail", say("kubeVirtUnreadable", { error: kubeVirt.error }));
  const cr = kubeVirt.value;
  if (!cr) {
    return result("kubevirt", title, "fail", say("kubeVirtMissing"), [], [say("kubeVirtInstallFix")]);
  }
  const version = cr.status?.observedKubeVirtVersion ?? say("unknownVersion");
  const where = `${cr.metadata.namespace ?? ""}/${cr.metadata.name ?? ""}`;
  if (cr.status?.phase !== "Deployed") {
    return result(
      "kubevirt",
      title,
      "warn",
      say("kubeVirtNotReady", { version, phase: cr.status?.phase ?? say("unknown") }),
      [say("kubeVirtResource", { where })],
      [say("kubeVirtNotReadyFix", { namespace: cr.metadata.namespace ?? "kubevirt" })],
    );
  }
  return result("kubevirt", title, "ok", say("kubeVirtDeployed", { version }), [
    say("kubeVirtResource", { where }),
  ]);
};

export const imageVolumeCheck: Check = ({ kubeVirt, kubernetesVersion, apiServerMetrics, nodes }) => {
  const title = say("imageVolumeTitle");
  const cr = kubeVirt.ok ? kubeVirt.value : undefined;
  const kvVersion = parseVersion(cr?.status?.observedKubeVirtVersion);
  const k8sVersion = parseVersion(kubernetesVersion.ok ? kubernetesVersion.value : undefined);
  if (!cr || !kvVersion || !k8sVersion) {
    return result("image-volume", title, "warn", say("imageVolumeVersionsUnknown"));
  }
  const kubeVirtGate = kubeVirtImageVolumeGate(cr, kvVersion);
  const details = [
    say("imageVolumeKubeVirtGate", {
      version: cr.status?.observedKubeVirtVersion ?? "",
      state: onOff(kubeVirtGate.enabled),
      because: kubeVirtGate.because,
    }),
  ];
  if (!kubeVirtGate.enabled) {
    return result("image-volume", title, "ok", say("imageVolumeNotUsed"), details);
  }

  const k8sGate = kubernetesImageVolumeGate(
    apiServerMetrics.ok ? apiServerMetrics.value : undefined,
    k8sVersion,
  );
  details.push(
    say("imageVolumeKubernetesGate", {
      version: kubernetesVersion.ok ? kubernetesVersion.value : "",
      state: onOff(k8sGate.enabled),
      because: k8sGate.because,
    }),
  );
  if (!apiServerMetrics.ok)
    details.push(say("imageVolumeMetricsUnreadable", { error: apiServerMetrics.error }));
  const disable = disableInKubeVirtFix(cr, atLeast(kvVersion, 1, 8));

  if (!k8sGate.enabled) {
    const why = [
      say("imageVolumeDropped", {
        failure: 'exec: "/container-disk-binary/usr/bin/container-disk": no such file or directory',
      }),
    ];
    if (k8sGate.source === "version") {
      return result(
        "image-volume",
        title,
        "warn",
        say("imageVolumeProbablyOff"),
        [...details, ...why, say("imageVolumeJudgedFromVersion")],
        [say("imageVolumeProbablyOffFix", { disable })],
      );
    }
    return result(
      "image-volume",
      title,
      "fail",
      say("imageVolumeOff"),
      [...details, ...why],
      [say("imageVolumeOffFix", { disable })],
    );
  }

  // Only the API server's gate is in sight: the kubelets' gate (and how the runtimes are configured)
  // would need nodes/proxy to read, which is root on every node and must not be granted (see
  // permissions.ts). So no text may claim more than "the API server's gate is on".
  const gate = say(k8sGate.source === "metrics" ? "apiServerGateOn" : "apiServerGateProbablyOn");
  const notVisible = say("kubeletsNotVisible");
  if (!nodes.ok) {
    return result("image-volume", title, "warn", say("imageVolumeNodesUnreadable", { gate }), [
      ...details,
      verbatim(nodes.error),
      notVisible,
    ]);
  }
  const tooOld = nodes.value.filter(
    (node) => runtimeSupportsImageVolumes(node.status?.nodeInfo?.containerRuntimeVersion) === false,
  );
  const unknown = nodes.value.filter(
    (node) => runtimeSupportsImageVolumes(node.status?.nodeInfo?.containerRuntimeVersion) === undefined,
  );
  // Facts as the nodes report them: "node-1 (containerd://1.7.2), node-2 (unknown runtime)".
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
      say("imageVolumeRuntimesTooOld", { gate, nodes: tooOld.length }),
      [...details, say("imageVolumeTooOldList", { runtimes: runtimes(tooOld) }), notVisible],
      [say("imageVolumeUpgradeFix", { disable })],
    );
  }
  if (unknown.length > 0) {
    return result("image-volume", title, "warn", say("imageVolumeRuntimesUnknown", { gate }), [
      ...details,
      say("imageVolumeUnknownList", { runtimes: runtimes(unknown) }),
      notVisible,
    ]);
  }
  return result("image-volume", title, "ok", say("imageVolumeOk", { gate }), [...details, notVisible]);
};

/** The steps that turn KubeVirt's ImageVolume gate off, one per line (none when there is no way). */
function disableInKubeVirtFix(cr: KubeVirt, hasDisabledList: boolean): DoctorText[] {
  const name = cr.metadata.name ?? "kubevirt";
  const namespace = cr.metadata.namespace ?? "kubevirt";
  const explicit = cr.spec?.configuration?.developerConfiguration?.featureGates?.includes("ImageVolume");
  const steps: DoctorText[] = [];
  if (explicit) steps.push(say("disableRemoveExplicit", { namespace, name }));
  if (hasDisabledList) {
    steps.push(
      say("disableAddToDisabledList", {
        command:
          `kubectl -n ${namespace} patch kubevirt ${name} --type merge -p ` +
          `'{"spec":{"configuration":{"developerConfiguration":{"disabledFeatureGates":["ImageVolume"]}}}}'`,
      }),
    );
  }
  return steps;
}

export const kvmCheck: Check = ({ nodes }) => {
  const title = say("kvmTitle");
  if (!nodes.ok) return result("kvm", title, "fail", say("nodesUnreadable", { error: nodes.error }));
  const withKvm = nodes.value.filter(
    (node) => (parseQuantity(node.status?.allocatable?.[kvmDevice]) ?? 0) > 0,
  );
  const names = (list: Node[]) => list.map((node) => node.metadata.name).join(", ");
  if (withKvm.length === 0) {
    return result(
      "kvm",
      title,
      "fail",
      say("kvmNone", { device: kvmDevice }),
      [say("kvmNodes", { nodes: nodes.value.length, names: names(nodes.value) || say("none") })],
      [say("kvmFix")],
    );
  }
  const without = nodes.value.filter((node) => !withKvm.includes(node));
  return result(
    "kvm",
    title,
    "ok",
    say("kvmSome", { withKvm: withKvm.length, nodes: nodes.value.length, device: kvmDevice }),
    [
      say("kvmWith", { names: names(withKvm) }),
      ...(without.length > 0 ? [say("kvmWithout", { names: names(without) })] : []),
    ],
  );
};

const enforceLabel = "pod-security.kubernetes.io/enforce";

export const vmNamespaceCheck: Check = ({ namespace, vmNamespace }) => {
  const title = say("vmNamespaceTitle");
  const labelFix = `kubectl label namespace ${vmNamespace} ${enforceLabel}=privileged --overwrite`;
  if (!namespace.ok) {
    return result(
      "vm-namespace",
      title,
      "fail",
      say("namespaceUnreadable", { namespace: vmNamespace, error: namespace.error }),
    );
  }
  if (!namespace.value) {
    return result(
      "vm-namespace",
      title,
      "fail",
      say("namespaceMissing", { namespace: vmNamespace }),
      [],
      [say("namespaceCreateFix", { namespace: vmNamespace, labelFix })],
    );
  }
  const level = namespace.value.metadata.labels?.[enforceLabel];
  const why = say("namespaceWhyPrivileged");
  if (level === "privileged") {
    return result("vm-namespace", title, "ok", say("namespacePrivileged", { namespace: vmNamespace }), [why]);
  }
  if (level === undefined) {
    return result(
      "vm-namespace",
      title,
      "warn",
      say("namespaceNoLabel", { namespace: vmNamespace, label: enforceLabel }),
      [why, say("namespaceDefaultRisk")],
      [verbatim(labelFix)],
    );
  }
  return result(
    "vm-namespace",
    title,
    "fail",
    say("namespaceRefused", { namespace: vmNamespace, level }),
    [why],
    [verbatim(labelFix)],
  );
};

export const permissionsCheck: Check = ({ required, forbidden, vmNamespace, leaseNamespace }) => {
  const title = say("permissionsTitle");
  if (!required.ok || !forbidden.ok) {
    const error = !required.ok ? required.error : !forbidden.ok ? forbidden.error : "";
    return result(
      "permissions",
      title,
      "fail",
      say("accessReviewsRefused", { error }),
      [],
      [say("accessReviewsFix")],
    );
  }
  const missing = required.value.filter((entry) => !entry.allowed);
  const dangerous = forbidden.value.filter((entry) => entry.allowed && entry.permission.severity === "fail");
  const tooMuch = forbidden.value.filter((entry) => entry.allowed && entry.permission.severity === "warn");
  const line = (key: DoctorTextKey, permission: Permission | ForbiddenPermission) =>
    say(key, {
      permission: describePermission(permission),
      scope: scopeOf(permission, { vmNamespace, leaseNamespace }),
      why: permission.why,
    });
  const details = [
    ...missing.map(({ permission }) => line("permissionMissing", permission)),
    ...dangerous.map(({ permission }) => line("permissionDangerous", permission)),
    ...tooMuch.map(({ permission }) => line("permissionNotNeeded", permission)),
  ];
  const adminHint = say("runAsConsoleHint");
  if (dangerous.length > 0) {
    return result(
      "permissions",
      title,
      "fail",
      say("permissionsDangerous", {
        what: whatTheyMay(
          dangerous.map((entry) => entry.permission),
          vmNamespace,
        ),
      }),
      details,
      [say("permissionsDangerousFix"), adminHint],
    );
  }
  if (missing.length > 0) {
    return result(
      "permissions",
      title,
      "fail",
      say("permissionsMissing", { missing: missing.length }),
      details,
      [say("permissionsMissingFix")],
    );
  }
  if (tooMuch.length > 0) {
    return result("permissions", title, "warn", say("permissionsTooMuch"), details, [adminHint]);
  }
  return result(
    "permissions",
    title,
    "ok",
    say("permissionsOk", { checks: required.value.length, namespace: vmNamespace }),
  );
};

/** "create pods, exec into pods in lab-sessions and reach the kubelets' API (nodes/proxy) cluster-wide". */
function whatTheyMay(permissions: ForbiddenPermission[], vmNamespace: string): DoctorText {
  const whats = (scope: ForbiddenPermission["scope"]) => [
    ...new Set(permissions.filter((permission) => permission.scope === scope).map(({ what }) => what)),
  ];
  const inNamespace = whats("vm-namespace");
  const clusterWide = whats("cluster");
  const here = say("dangerousInNamespace", { what: inNamespace.join(", "), namespace: vmNamespace });
  const everywhere = say("dangerousClusterWide", { what: clusterWide.join(", ") });
  if (inNamespace.length > 0 && clusterWide.length > 0)
    return say("dangerousBoth", { inNamespace: here, clusterWide: everywhere });
  return inNamespace.length > 0 ? here : everywhere;
}

/** Where a permission applies, said after it: " in lab-sessions", " cluster-wide". */
function scopeOf(
  permission: Permission | ForbiddenPermission,
  namespaces: { vmNamespace: string; leaseNamespace?: string },
): DoctorText {
  if (permission.scope === "cluster") return say("scopeClusterWide");
  return say("scopeIn", {
    namespace:
      (permission.scope === "lease-namespace" ? namespaces.leaseNamespace : namespaces.vmNamespace) ?? "",
  });
}

export const cpuAllocationRatioCheck: Check = ({ kubeVirt }) => {
  const title = say("cpuRatioTitle");
  const cr = kubeVirt.ok ? kubeVirt.value : undefined;
  if (!cr) return result("cpu-allocation-ratio", title, "warn", say("kubeVirtResourceUnknown"));
  const configured = cr.spec?.configuration?.developerConfiguration?.cpuAllocationRatio;
  const ratio = typeof configured === "number" && configured > 0 ? configured : defaultCpuAllocationRatio;
  const example = launcherPodRequest({ vcpus: 2, memoryBytes: 4 * 2 ** 30 }, { cpuAllocationRatio: ratio });
  return result(
    "cpu-allocation-ratio",
    title,
    "ok",
    say(configured === undefined ? "cpuRatioDefault" : "cpuRatio", {
      ratio,
      millis: Math.ceil(1000 / ratio),
    }),
    [
      say("cpuRatioExample", {
        cpu: example.cpuMillis - consoleLogSidecar.cpuMillis,
        memory: Math.round((example.memoryBytes - consoleLogSidecar.memoryBytes) / 2 ** 20),
      }),
    ],
  );
};

export const serialConsoleLogCheck: Check = ({ kubeVirt }) => {
  const title = say("serialLogTitle");
  const cr = kubeVirt.ok ? kubeVirt.value : undefined;
  if (!cr) return result("serial-console-log", title, "warn", say("kubeVirtResourceUnknown"));
  const disabled = cr.spec?.configuration?.virtualMachineOptions?.disableSerialConsoleLog !== undefined;
  return result("serial-console-log", title, "ok", say(disabled ? "serialLogOff" : "serialLogOn"), [
    say("serialLogWhy"),
  ]);
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

function onOff(enabled: boolean): DoctorText {
  return say(enabled ? "on" : "off");
}
