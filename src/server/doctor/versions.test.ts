// Which ImageVolume gates are on, judged from versions, settings and the API server's metrics.
import { describe, expect, it } from "vitest";
import type { KubeVirt } from "../kube/cluster-facts.ts";
import { aKubeVirt } from "./testing/cluster-readings.ts";
import {
  kubernetesImageVolumeGate,
  kubeVirtImageVolumeGate,
  parseVersion,
  runtimeSupportsImageVolumes,
  type Version,
} from "./versions.ts";

const v = (text: string): Version => {
  const version = parseVersion(text);
  if (!version) throw new Error(text);
  return version;
};

describe("KubeVirt's ImageVolume gate", () => {
  it("follows explicit enable, then explicit disable (1.8+), then the stage's default (on from 1.9)", () => {
    const on = (kubeVirt: KubeVirt) =>
      kubeVirtImageVolumeGate(kubeVirt, v(kubeVirt.status?.observedKubeVirtVersion ?? "")).enabled;
    expect(on(aKubeVirt("v1.5.2", { featureGates: ["ImageVolume"] }))).toBe(false);
    expect(on(aKubeVirt("v1.7.1"))).toBe(false);
    expect(on(aKubeVirt("v1.7.1", { featureGates: ["ImageVolume"] }))).toBe(true);
    expect(on(aKubeVirt("v1.8.2", { disabledFeatureGates: ["ImageVolume"] }))).toBe(false);
    expect(on(aKubeVirt("v1.9.0"))).toBe(true);
    expect(on(aKubeVirt("v1.9.0", { disabledFeatureGates: ["ImageVolume"] }))).toBe(false);
    expect(on(aKubeVirt("v1.10.0-rc.1"))).toBe(true);
  });
});

describe("Kubernetes' ImageVolume gate", () => {
  it("is read from the API server's metric, whatever the label order", () => {
    const metrics =
      'kubernetes_feature_enabled{stage="BETA",name="ImageVolume"} 1\nkubernetes_feature_enabled{name="Other",stage=""} 0\n';
    expect(kubernetesImageVolumeGate(metrics, v("v1.33.0"))).toMatchObject({
      enabled: true,
      source: "metrics",
    });
  });

  it("is assumed from the version when the metric cannot be read", () => {
    expect(kubernetesImageVolumeGate(undefined, v("v1.34.1"))).toMatchObject({
      enabled: false,
      source: "version",
    });
    expect(kubernetesImageVolumeGate("", v("v1.35.0"))).toMatchObject({ enabled: true, source: "version" });
    expect(kubernetesImageVolumeGate(undefined, v("v1.30.4")).enabled).toBe(false);
  });

  it("needs containerd 2.1 or CRI-O 1.31 on the nodes", () => {
    expect(runtimeSupportsImageVolumes("containerd://1.7.22")).toBe(false);
    expect(runtimeSupportsImageVolumes("containerd://2.1.0")).toBe(true);
    expect(runtimeSupportsImageVolumes("cri-o://1.31.1")).toBe(true);
    expect(runtimeSupportsImageVolumes("docker://27.1.1")).toBeUndefined();
  });
});
