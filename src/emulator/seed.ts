// The objects a fresh cluster already has: the standard namespaces, the nodes from the cluster
// config, and KubeVirt's CR reporting the installed version and its feature-gate settings. They are
// written through the registry and admission like any client's, so seeding belongs to the
// composition beside emulator.ts rather than to cluster/, which the API server's folders build on.
import { admit } from "./apiserver/admission/admission.ts";
import type { Registry } from "./apiserver/registry.ts";
import type { ClusterConfig, NodeConfig } from "./cluster/cluster-config.ts";
import type { JsonObject } from "./cluster/objects.ts";
import { kubeVirts, namespaces, nodes } from "./cluster/resources.ts";

export const labSessionsNamespace = "lab-sessions";
export const labConsoleNamespace = "lab-console";

const initialNamespaces: { name: string; labels?: Record<string, string> }[] = [
  { name: "default" },
  { name: "kube-system" },
  { name: "kubevirt" },
  // Where the BFF runs (deploy/base): its replicas' Leases live here.
  { name: labConsoleNamespace, labels: { "pod-security.kubernetes.io/enforce": "restricted" } },
  // virt-launcher pods need privileges (see the field notes), so the VM namespace enforces "privileged".
  { name: labSessionsNamespace, labels: { "pod-security.kubernetes.io/enforce": "privileged" } },
];

/** Where a real API server reaches the nodes' kubelet API (kubelet/kubelet-server.ts). */
export interface KubeletEndpoint {
  address: string;
  port: number;
}

function nodeObject(
  node: NodeConfig,
  index: number,
  config: ClusterConfig,
  kubelet: KubeletEndpoint | undefined,
): JsonObject {
  const resources: Record<string, string> = {
    cpu: node.cpu,
    memory: node.memory,
    pods: String(node.pods),
    "ephemeral-storage": "100Gi",
    "devices.kubevirt.io/tun": "1k",
    "devices.kubevirt.io/vhost-net": "1k",
    ...(node.kvm ? { "devices.kubevirt.io/kvm": "1k" } : {}),
  };
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    metadata: {
      name: node.name,
      labels: {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubevirt.io/schedulable": "true",
        "node-role.kubernetes.io/worker": "",
        ...node.labels,
      },
      annotations: { "kubevirt.io/heartbeat": now },
    },
    spec: { podCIDR: `10.244.${index}.0/24`, podCIDRs: [`10.244.${index}.0/24`] },
    status: {
      capacity: resources,
      allocatable: resources,
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          message: "kubelet is posting ready status",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
      addresses: [
        { type: "InternalIP", address: kubelet?.address ?? `192.168.122.${10 + index}` },
        { type: "Hostname", address: node.name },
      ],
      ...(kubelet ? { daemonEndpoints: { kubeletEndpoint: { Port: kubelet.port } } } : {}),
      nodeInfo: {
        kubeletVersion: config.kubernetes.version,
        kubeProxyVersion: config.kubernetes.version,
        containerRuntimeVersion: node.containerRuntime,
        osImage: "Ubuntu 24.04.2 LTS",
        kernelVersion: "6.8.0-60-generic",
        operatingSystem: "linux",
        architecture: "amd64",
      },
    },
  };
}

function kubeVirtObject(config: ClusterConfig): JsonObject {
  const { version, featureGates, disabledFeatureGates, cpuAllocationRatio } = config.kubevirt;
  return {
    metadata: { name: "kubevirt", namespace: "kubevirt", finalizers: ["foregroundDeleteKubeVirt"] },
    spec: {
      certificateRotateStrategy: {},
      configuration: {
        developerConfiguration: {
          featureGates,
          // The field exists from v1.8.0; older CRs simply lack it.
          ...(disabledFeatureGates.length > 0 ? { disabledFeatureGates } : {}),
          cpuAllocationRatio,
        },
      },
      customizeComponents: {},
      imagePullPolicy: "IfNotPresent",
      workloadUpdateStrategy: {},
    },
    status: {
      phase: "Deployed",
      observedKubeVirtVersion: version,
      observedKubeVirtRegistry: "quay.io/kubevirt",
      targetKubeVirtVersion: version,
      targetKubeVirtRegistry: "quay.io/kubevirt",
      operatorVersion: version,
      conditions: [
        {
          type: "Available",
          status: "True",
          reason: "AllComponentsReady",
          message: "All components are ready.",
        },
        {
          type: "Progressing",
          status: "False",
          reason: "AllComponentsReady",
          message: "All components are ready.",
        },
        {
          type: "Degraded",
          status: "False",
          reason: "AllComponentsReady",
          message: "All components are ready.",
        },
      ],
    },
  };
}

function pickKubelet(node: JsonObject): JsonObject {
  const status = node.status as JsonObject;
  return { addresses: status.addresses, daemonEndpoints: status.daemonEndpoints };
}

/**
 * Creates what is missing: everything in a fresh emulator; beside a real API server, what that
 * cluster lacks of it (its own namespaces stay as they are), with the nodes' kubelet endpoint.
 */
export function seedCluster(registry: Registry, config: ClusterConfig, kubelet?: KubeletEndpoint): void {
  for (const namespace of initialNamespaces) {
    if (registry.find(namespaces, "", namespace.name)) continue;
    const admitted = admit(
      namespaces,
      { metadata: { name: namespace.name, labels: namespace.labels ?? {} } },
      "create",
    );
    registry.create(namespaces, admitted.object);
  }
  config.nodes.forEach((node, index) => {
    const seeded = nodeObject(node, index, config, kubelet);
    const existing = registry.find(nodes, "", node.name);
    if (!existing) registry.create(nodes, seeded, { keepStatus: true });
    // A node left by an earlier run names that run's kubelet: this one's answers now.
    else if (kubelet)
      registry.write(nodes, {
        ...existing,
        status: { ...(existing.status as JsonObject), ...pickKubelet(seeded) },
      });
  });
  if (registry.store.list(kubeVirts).length === 0) {
    registry.create(kubeVirts, kubeVirtObject(config), { keepStatus: true });
  }
}
