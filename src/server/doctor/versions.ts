// Version strings and feature-gate states as the two projects define them.
import { say, type DoctorText } from "../../common/doctor-texts.ts";
import type { KubeVirt } from "../kube/cluster-facts.ts";

export interface Version {
  major: number;
  minor: number;
  patch: number;
}

/** "v1.34.1", "v1.9.0-rc.1", "1.31.2+k3s1" -> numbers; undefined when it is not a version. */
export function parseVersion(text: string | undefined): Version | undefined {
  const match = /^v?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?/.exec(text ?? "");
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3] ?? 0) };
}

export function atLeast(version: Version, major: number, minor: number): boolean {
  return version.major > major || (version.major === major && version.minor >= minor);
}

export interface GateState {
  enabled: boolean;
  /** Why, as a clause: "it is listed in …featureGates", "Beta gates are on by default from KubeVirt 1.9…" */
  because: DoctorText;
}

/**
 * Whether ImageVolume is on in KubeVirt (pkg/virt-config/featuregate): explicitly enabled wins, then
 * explicitly disabled (the disabledFeatureGates field exists from 1.8), then the stage's default. The
 * gate is Alpha in 1.6, Beta from 1.7, and Beta gates are on by default from 1.9.
 */
export function kubeVirtImageVolumeGate(kubeVirt: KubeVirt, version: Version): GateState {
  const developer = kubeVirt.spec?.configuration?.developerConfiguration;
  if (!atLeast(version, 1, 6)) return { enabled: false, because: say("becauseKubeVirtTooOld") };
  if (developer?.featureGates?.includes("ImageVolume")) {
    return {
      enabled: true,
      because: say("becauseInFeatureGates"),
    };
  }
  if (atLeast(version, 1, 8) && developer?.disabledFeatureGates?.includes("ImageVolume")) {
    return {
      enabled: false,
      because: say("becauseInDisabledFeatureGates"),
    };
  }
  if (atLeast(version, 1, 9)) {
    return {
      enabled: true,
      because: say("becauseBetaOnByDefault"),
    };
  }
  return {
    enabled: false,
    because: say("becauseOffByDefault", {
      stage: atLeast(version, 1, 7) ? "Beta" : "Alpha",
      version: `${version.major}.${version.minor}`,
    }),
  };
}

/**
 * Kubernetes' own ImageVolume gate: read from the API server's kubernetes_feature_enabled metric, or,
 * when that cannot be read, the default of the version (Alpha 1.31, Beta off 1.33, on by default 1.35).
 */
export function kubernetesImageVolumeGate(
  metricsText: string | undefined,
  version: Version,
): GateState & { source: "metrics" | "version" } {
  if (metricsText !== undefined) {
    const match = /^kubernetes_feature_enabled\{([^}]*)\}\s+([0-9.eE+-]+)\s*$/m;
    for (const line of metricsText.split("\n")) {
      const found = match.exec(line);
      if (!found || !/(^|,)name="ImageVolume"(,|$)/.test(found[1] ?? "")) continue;
      const enabled = Number(found[2]) === 1;
      return {
        enabled,
        because: say("becauseMetrics", {
          metric: 'kubernetes_feature_enabled{name="ImageVolume"}',
          value: enabled ? 1 : 0,
        }),
        source: "metrics",
      };
    }
  }
  if (!atLeast(version, 1, 31)) {
    return {
      enabled: false,
      because: say("becauseKubernetesTooOld"),
      source: "version",
    };
  }
  if (atLeast(version, 1, 35)) {
    return {
      enabled: true,
      because: say("becauseKubernetesOnByDefault"),
      source: "version",
    };
  }
  return {
    enabled: false,
    because: say("becauseKubernetesOffByDefault", { version: `${version.major}.${version.minor}` }),
    source: "version",
  };
}

/** Whether a node's runtime can mount image volumes: containerd 2.1+, CRI-O 1.31+; undefined if unknown. */
export function runtimeSupportsImageVolumes(runtimeVersion: string | undefined): boolean | undefined {
  const match = /^([a-z-]+):\/\/(.*)$/.exec(runtimeVersion ?? "");
  const version = parseVersion(match?.[2]);
  if (!match || !version) return undefined;
  if (match[1] === "containerd") return atLeast(version, 2, 1);
  if (match[1] === "cri-o") return atLeast(version, 1, 31);
  return undefined;
}
