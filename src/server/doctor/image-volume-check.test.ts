// The ImageVolume preflight's verdicts for version triads no emulated cluster in doctor.test.ts covers.
import { describe, expect, it } from "vitest";
import { imageVolumeCheck } from "./image-volume-check.ts";
import { aKubeVirt, aNode, readings } from "./testing/cluster-readings.ts";

describe("the ImageVolume check", () => {
  it("fails when the API server's gate is on but a node's containerd is too old", () => {
    const check = imageVolumeCheck(
      readings({
        apiServerMetrics: {
          ok: true,
          value: 'kubernetes_feature_enabled{name="ImageVolume",stage="BETA"} 1\n',
        },
        nodes: {
          ok: true,
          value: [aNode("node01", "containerd://2.1.4"), aNode("node02", "containerd://1.7.22")],
        },
      }),
    );
    expect(check.status).toBe("fail");
    expect(check.details.join("\n")).toContain("Too old: node02 (containerd://1.7.22).");
  });

  it("warns, judging from the version, when the API server's gates cannot be read", () => {
    const check = imageVolumeCheck(readings({ apiServerMetrics: { ok: false, error: "forbidden (403)" } }));
    expect(check.status).toBe("warn");
    expect(check.details).toContain("The API server's /metrics could not be read: forbidden (403)");
  });

  it("tells KubeVirt 1.7 to drop the explicit gate: it has no disabledFeatureGates", () => {
    const check = imageVolumeCheck(
      readings({ kubeVirt: { ok: true, value: aKubeVirt("v1.7.2", { featureGates: ["ImageVolume"] }) } }),
    );
    expect(check.status).toBe("fail");
    expect(check.fix).toContain(
      "Remove ImageVolume from spec.configuration.developerConfiguration.featureGates",
    );
    expect(check.fix).not.toContain("disabledFeatureGates");
  });

  it("claims only the API server's gate: the kubelets' cannot be read without nodes/proxy", () => {
    const gateOn = {
      ok: true as const,
      value: 'kubernetes_feature_enabled{name="ImageVolume",stage="BETA"} 1\n',
    };
    const check = imageVolumeCheck(readings({ apiServerMetrics: gateOn }));
    expect(check.status).toBe("ok");
    expect(check.summary).toBe(
      "The API server's ImageVolume gate is on and every node's container runtime is recent enough for image volumes; the kubelets' gate cannot be checked from here.",
    );
    expect(check.details.at(-1)).toMatch(
      /^The kubelets' ImageVolume gate .* cannot be checked from here: .*nodes\/proxy/,
    );
    const withOldRuntime = imageVolumeCheck(
      readings({
        apiServerMetrics: gateOn,
        nodes: { ok: true, value: [aNode("node02", "containerd://1.7.22")] },
      }),
    );
    const unreadableNodes = imageVolumeCheck(
      readings({ apiServerMetrics: gateOn, nodes: { ok: false, error: "forbidden (403)" } }),
    );
    for (const each of [check, withOldRuntime, unreadableNodes]) {
      expect(each.summary).not.toMatch(/both gates/i);
      expect(each.summary).toMatch(/^The API server.s ImageVolume gate is on[,; ]/);
    }
  });

  it("says the API server's gate is only judged from the version when /metrics cannot be read", () => {
    const check = imageVolumeCheck(
      readings({
        kubernetesVersion: { ok: true, value: "v1.35.0" },
        apiServerMetrics: { ok: false, error: "forbidden (403)" },
      }),
    );
    expect(check.status).toBe("ok");
    expect(check.summary).toMatch(
      /^The API server's ImageVolume gate should be on \(judged from its version\)/,
    );
  });

  it("is fine with KubeVirt copying container disks, whatever Kubernetes does", () => {
    const check = imageVolumeCheck(readings({ kubeVirt: { ok: true, value: aKubeVirt("v1.8.0") } }));
    expect(check.status).toBe("ok");
  });
});
