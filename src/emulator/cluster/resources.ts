// cluster/: what the emulated cluster is before any request reaches it, so it imports no other part
// of the emulator: the kinds it serves (this file) and the shape of their objects (objects.ts), its
// settings (cluster-config.ts) with the lifecycle's timings (timing.ts), the memory KubeVirt asks for
// a VMI (memory-overhead.ts), and how clients find and trust it: its CA and serving certificate
// (tls.ts) and the kubeconfigs it writes (kubeconfig.ts). The objects it starts with are ../seed.ts.
//
// The kinds the emulator serves: one entry per REST resource, read by discovery, OpenAPI, routing
// and the store. Adding a kind here is what makes it exist on the wire.

export type Verb = "create" | "delete" | "get" | "list" | "patch" | "update" | "watch";

export interface ResourceType {
  /** Store key and lookup id: `kubevirt.io/virtualmachines`, `/secrets` for the core group. */
  id: string;
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  /** What clients may do. Controllers inside the emulator write read-only kinds directly. */
  verbs: Verb[];
  /** Whether writes to the main resource ignore status (a `/status` subresource exists). */
  hasStatusSubresource: boolean;
  /** Definition name in the schema set (see apiserver/openapi/schema.ts) used to validate client writes. */
  schema: string;
  /** Field selectors besides metadata.name and metadata.namespace (which every kind supports). */
  fieldSelectors: string[];
}

const allVerbs: Verb[] = ["create", "delete", "get", "list", "patch", "update", "watch"];
const readVerbs: Verb[] = ["get", "list", "watch"];

function resource(spec: Omit<ResourceType, "id">): ResourceType {
  return { ...spec, id: `${spec.group}/${spec.plural}` };
}

export const namespaces = resource({
  group: "",
  version: "v1",
  plural: "namespaces",
  singular: "namespace",
  kind: "Namespace",
  shortNames: ["ns"],
  categories: [],
  namespaced: false,
  verbs: allVerbs,
  hasStatusSubresource: true,
  schema: "io.k8s.api.core.v1.Namespace",
  fieldSelectors: ["status.phase"],
});

export const secrets = resource({
  group: "",
  version: "v1",
  plural: "secrets",
  singular: "secret",
  kind: "Secret",
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: allVerbs,
  hasStatusSubresource: false,
  schema: "io.k8s.api.core.v1.Secret",
  fieldSelectors: ["type"],
});

export const pods = resource({
  group: "",
  version: "v1",
  plural: "pods",
  singular: "pod",
  kind: "Pod",
  shortNames: ["po"],
  categories: ["all"],
  namespaced: true,
  verbs: readVerbs,
  hasStatusSubresource: true,
  schema: "io.k8s.api.core.v1.Pod",
  fieldSelectors: ["spec.nodeName", "status.phase"],
});

export const nodes = resource({
  group: "",
  version: "v1",
  plural: "nodes",
  singular: "node",
  kind: "Node",
  shortNames: ["no"],
  categories: [],
  namespaced: false,
  verbs: readVerbs,
  hasStatusSubresource: true,
  schema: "io.k8s.api.core.v1.Node",
  fieldSelectors: [],
});

export const events = resource({
  group: "",
  version: "v1",
  plural: "events",
  singular: "event",
  kind: "Event",
  shortNames: ["ev"],
  categories: [],
  namespaced: true,
  verbs: readVerbs,
  hasStatusSubresource: false,
  schema: "io.k8s.api.core.v1.Event",
  fieldSelectors: [
    "involvedObject.kind",
    "involvedObject.name",
    "involvedObject.namespace",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "type",
    "source",
  ],
});

export const virtualMachines = resource({
  group: "kubevirt.io",
  version: "v1",
  plural: "virtualmachines",
  singular: "virtualmachine",
  kind: "VirtualMachine",
  shortNames: ["vm", "vms"],
  categories: ["all"],
  namespaced: true,
  verbs: allVerbs,
  hasStatusSubresource: true,
  schema: "v1.VirtualMachine",
  fieldSelectors: [],
});

export const virtualMachineInstances = resource({
  group: "kubevirt.io",
  version: "v1",
  plural: "virtualmachineinstances",
  singular: "virtualmachineinstance",
  kind: "VirtualMachineInstance",
  shortNames: ["vmi", "vmis"],
  categories: ["all"],
  namespaced: true,
  verbs: allVerbs,
  hasStatusSubresource: false,
  schema: "v1.VirtualMachineInstance",
  fieldSelectors: [],
});

export const kubeVirts = resource({
  group: "kubevirt.io",
  version: "v1",
  plural: "kubevirts",
  singular: "kubevirt",
  kind: "KubeVirt",
  shortNames: ["kv", "kvs"],
  categories: ["all"],
  namespaced: true,
  verbs: allVerbs,
  hasStatusSubresource: true,
  schema: "v1.KubeVirt",
  fieldSelectors: [],
});

// Leader election and the BFF's replicas coordinate through these (client-go's resourcelock kind).
export const leases = resource({
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  singular: "lease",
  kind: "Lease",
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: allVerbs,
  hasStatusSubresource: false,
  schema: "io.k8s.api.coordination.v1.Lease",
  fieldSelectors: [],
});

// Stored and validated as the API server does; nothing enforces them (the guests have loopback only).
export const networkPolicies = resource({
  group: "networking.k8s.io",
  version: "v1",
  plural: "networkpolicies",
  singular: "networkpolicy",
  kind: "NetworkPolicy",
  shortNames: ["netpol"],
  categories: [],
  namespaced: true,
  verbs: allVerbs,
  hasStatusSubresource: false,
  schema: "io.k8s.api.networking.v1.NetworkPolicy",
  fieldSelectors: [],
});

/** Every stored kind, in the order discovery lists them. */
export const resourceTypes: ResourceType[] = [
  namespaces,
  secrets,
  pods,
  nodes,
  events,
  leases,
  networkPolicies,
  virtualMachines,
  virtualMachineInstances,
  kubeVirts,
];

export const kubevirtGroup = "kubevirt.io";
export const coordinationGroup = "coordination.k8s.io";
export const networkingGroup = "networking.k8s.io";
export const subresourcesGroup = "subresources.kubevirt.io";
export const authorizationGroup = "authorization.k8s.io";

/** Subresources served under subresources.kubevirt.io, as KubeVirt lists them in discovery. */
export const kubevirtSubresources: { name: string; verbs: string[] }[] = [
  { name: "virtualmachines/start", verbs: ["update"] },
  { name: "virtualmachines/stop", verbs: ["update"] },
  { name: "virtualmachines/restart", verbs: ["update"] },
  { name: "virtualmachines/portforward", verbs: ["get"] },
  { name: "virtualmachineinstances/console", verbs: ["get"] },
  { name: "virtualmachineinstances/portforward", verbs: ["get"] },
  { name: "virtualmachineinstances/vnc", verbs: ["get"] },
  { name: "virtualmachineinstances/vnc/screenshot", verbs: ["get"] },
  { name: "virtualmachineinstances/pause", verbs: ["update"] },
  { name: "virtualmachineinstances/unpause", verbs: ["update"] },
  { name: "virtualmachineinstances/guestosinfo", verbs: ["get"] },
  { name: "virtualmachineinstances/userlist", verbs: ["get"] },
  { name: "virtualmachineinstances/filesystemlist", verbs: ["get"] },
];

export function findResource(group: string, version: string, plural: string): ResourceType | undefined {
  return resourceTypes.find(
    (type) => type.group === group && type.version === version && type.plural === plural,
  );
}

/**
 * KubeVirt's kinds are custom resources: they track metadata.generation, require a resourceVersion
 * on update and take no strategic merge patch. Built-in kinds (core, coordination.k8s.io,
 * networking.k8s.io) do neither.
 */
export function isCustomResource(type: ResourceType): boolean {
  return type.group === kubevirtGroup;
}

export function apiVersionOf(type: ResourceType): string {
  return type.group === "" ? type.version : `${type.group}/${type.version}`;
}
