// The doctor's ImageVolume preflight: when KubeVirt mounts container disks as image volumes, the
// API server's gate and every node's container runtime must support them, or each VM fails to start
// with an error that names neither. Which gates are on follows from the versions (versions.ts).
import { say, verbatim, type DoctorText } from "../../common/doctor-texts.ts";
import type { KubeVirt, Node } from "../kube/cluster-facts.ts";
import { result, type Check } from "./check-verdict.ts";
import {
  atLeast,
  kubernetesImageVolumeGate,
  kubeVirtImageVolumeGate,
  parseVersion,
  runtimeSupportsImageVolumes,
} from "./versions.ts";

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

function onOff(enabled: boolean): DoctorText {
  return say(enabled ? "on" : "off");
}
