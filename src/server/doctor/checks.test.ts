// The doctor's verdicts for version triads and settings no emulated cluster in doctor.test.ts covers.
import { describe, expect, it } from "vitest";
import type { KubeVirt, Node } from "../kube/cluster-facts.ts";
import { imageVolumeCheck, permissionsCheck, vmNamespaceCheck, type ClusterReadings } from "./checks.ts";
import { forbiddenPermissions, requiredPermissions } from "./permissions.ts";
import {
  kubernetesImageVolumeGate,
  kubeVirtImageVolumeGate,
  parseVersion,
  runtimeSupportsImageVolumes,
  type Version,
} from "./versions.ts";

function aKubeVirt(
  version: string,
  gates: { featureGates?: string[]; disabledFeatureGates?: string[] } = {},
): KubeVirt {
  return {
    metadata: { name: "kubevirt", namespace: "kubevirt" },
    spec: { configuration: { developerConfiguration: gates } },
    status: { phase: "Deployed", observedKubeVirtVersion: version },
  };
}

function aNode(name: string, runtime: string): Node {
  return { metadata: { name }, status: { nodeInfo: { containerRuntimeVersion: runtime } } };
}

const v = (text: string): Version => {
  const version = parseVersion(text);
  if (!version) throw new Error(text);
  return version;
};

function readings(overrides: Partial<ClusterReadings>): ClusterReadings {
  return {
    vmNamespace: "lab-sessions",
    kubernetesVersion: { ok: true, value: "v1.34.1" },
    kubeVirt: { ok: true, value: aKubeVirt("v1.9.0") },
    nodes: { ok: true, value: [aNode("node01", "containerd://2.1.4")] },
    namespace: { ok: true, value: { metadata: { name: "lab-sessions" } } },
    apiServerMetrics: { ok: true, value: 'kubernetes_feature_enabled{name="ImageVolume",stage="BETA"} 0\n' },
    required: { ok: true, value: requiredPermissions.map((permission) => ({ permission, allowed: true })) },
    forbidden: {
      ok: true,
      value: forbiddenPermissions.map((permission) => ({ permission, allowed: false })),
    },
    ...overrides,
  };
}

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

describe("the VM namespace check", () => {
  it("fails a namespace that enforces a stricter Pod Security level, and warns when none is set", () => {
    const labelled = (level: string | undefined) =>
      vmNamespaceCheck(
        readings({
          namespace: {
            ok: true,
            value: {
              metadata: {
                name: "lab-sessions",
                labels: level ? { "pod-security.kubernetes.io/enforce": level } : {},
              },
            },
          },
        }),
      );
    expect(labelled("privileged").status).toBe("ok");
    expect(labelled("baseline")).toMatchObject({
      status: "fail",
      fix: "kubectl label namespace lab-sessions pod-security.kubernetes.io/enforce=privileged --overwrite",
    });
    expect(labelled(undefined).status).toBe("warn");
    expect(vmNamespaceCheck(readings({ namespace: { ok: true, value: undefined } })).status).toBe("fail");
  });
});

describe("the permissions check", () => {
  it("names each missing permission with what it is for", () => {
    const check = permissionsCheck(
      readings({
        required: {
          ok: true,
          value: requiredPermissions.map((permission) => ({
            permission,
            allowed: !(
              "resource" in permission &&
              permission.resource === "virtualmachines" &&
              permission.verb === "patch"
            ),
          })),
        },
      }),
    );
    expect(check.status).toBe("fail");
    expect(check.details).toEqual([
      "Missing: patch virtualmachines.kubevirt.io in lab-sessions (extending a session).",
    ]);
  });

  it("fails the websocket forms of exec and attach, and nodes/proxy with any verb cluster-wide", () => {
    const nodesProxy = forbiddenPermissions.filter(
      (permission) => permission.resource === "nodes" && permission.subresource === "proxy",
    );
    expect(nodesProxy.map((permission) => permission.verb)).toEqual([
      "get",
      "create",
      "update",
      "patch",
      "delete",
    ]);
    expect(new Set(nodesProxy.map((permission) => permission.scope))).toEqual(new Set(["cluster"]));
    const check = permissionsCheck(
      readings({
        forbidden: {
          ok: true,
          value: forbiddenPermissions.map((permission) => ({
            permission,
            allowed:
              (permission.subresource === "attach" && permission.verb === "get") ||
              (permission.subresource === "proxy" && ["get", "create"].includes(permission.verb)),
          })),
        },
      }),
    );
    expect(check.status).toBe("fail");
    expect(check.summary).toBe(
      "The console's credentials may attach to pods over a websocket in lab-sessions and reach the kubelets' API (nodes/proxy) cluster-wide: a path to root on the nodes.",
    );
    expect(check.details.map((line) => line.split(". ")[0])).toEqual([
      "Allowed but must not be: get pods/attach in lab-sessions",
      "Allowed but must not be: get nodes/proxy cluster-wide",
      "Allowed but must not be: create nodes/proxy cluster-wide",
    ]);
    expect(check.details[0]).toContain("Up to Kubernetes 1.34 a websocket attach is a GET");
  });

  it("requires delete on Secrets, for a warm claim and for admission", () => {
    const deleteSecrets = requiredPermissions.find(
      (permission) =>
        "resource" in permission && permission.resource === "secrets" && permission.verb === "delete",
    );
    expect(deleteSecrets).toMatchObject({ scope: "vm-namespace" });
    expect(deleteSecrets?.why).toBe(
      "a warm VM's claim replaces its cloud-init with the session's, and OwnerReferencesPermissionEnforcement (on in OpenShift and CIS-hardened clusters) needs delete on a Secret to create it with an ownerReference",
    );
  });

  it("warns about reading Secrets, which the console never needs", () => {
    const check = permissionsCheck(
      readings({
        forbidden: {
          ok: true,
          value: forbiddenPermissions.map((permission) => ({
            permission,
            allowed: permission.resource === "secrets",
          })),
        },
      }),
    );
    expect(check.status).toBe("warn");
    expect(check.details).toHaveLength(2);
  });
});
