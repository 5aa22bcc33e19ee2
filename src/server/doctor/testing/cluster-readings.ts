// Test data for the doctor's checks: readings of a healthy cluster (KubeVirt 1.9, containerd 2.1,
// every permission as it should be) that each test overrides with the one fact it is about.
import type { KubeVirt, Node } from "../../kube/cluster-facts.ts";
import type { ClusterReadings } from "../check-verdict.ts";
import { forbiddenPermissions, requiredPermissions } from "../permissions.ts";

export function aKubeVirt(
  version: string,
  gates: { featureGates?: string[]; disabledFeatureGates?: string[] } = {},
): KubeVirt {
  return {
    metadata: { name: "kubevirt", namespace: "kubevirt" },
    spec: { configuration: { developerConfiguration: gates } },
    status: { phase: "Deployed", observedKubeVirtVersion: version },
  };
}

export function aNode(name: string, runtime: string): Node {
  return { metadata: { name }, status: { nodeInfo: { containerRuntimeVersion: runtime } } };
}

/** The answers to the access reviews of `permissions`: allowed where `allowed` says so. */
export function accessReviews<P>(permissions: readonly P[], allowed: (permission: P) => boolean) {
  return {
    ok: true as const,
    value: permissions.map((permission) => ({ permission, allowed: allowed(permission) })),
  };
}

export function readings(overrides: Partial<ClusterReadings>): ClusterReadings {
  return {
    vmNamespace: "lab-sessions",
    kubernetesVersion: { ok: true, value: "v1.34.1" },
    kubeVirt: { ok: true, value: aKubeVirt("v1.9.0") },
    nodes: { ok: true, value: [aNode("node01", "containerd://2.1.4")] },
    namespace: { ok: true, value: { metadata: { name: "lab-sessions" } } },
    apiServerMetrics: { ok: true, value: 'kubernetes_feature_enabled{name="ImageVolume",stage="BETA"} 0\n' },
    required: accessReviews(requiredPermissions, () => true),
    forbidden: accessReviews(forbiddenPermissions, () => false),
    ...overrides,
  };
}
