// The discovery documents kubectl and client libraries read before anything else: /version, /api,
// /apis and one APIResourceList per group/version (kubectl maps `vm` to virtualmachines from these).
// kubectl may ask for aggregated discovery first; answering the legacy format is what it falls back to.
import type { ClusterConfig } from "../cluster/cluster-config.ts";
import {
  authorizationGroup,
  coordinationGroup,
  kubevirtSubresources,
  networkingGroup,
  resourceTypes,
  subresourcesGroup,
  type ResourceType,
} from "../cluster/resources.ts";

interface ApiResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

function describe(type: ResourceType): ApiResource[] {
  const main: ApiResource = {
    name: type.plural,
    singularName: type.singular,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: [...type.verbs],
    ...(type.shortNames.length > 0 ? { shortNames: type.shortNames } : {}),
    ...(type.categories.length > 0 ? { categories: type.categories } : {}),
  };
  const status: ApiResource[] =
    type.hasStatusSubresource && type.verbs.includes("update")
      ? [
          {
            name: `${type.plural}/status`,
            singularName: "",
            namespaced: type.namespaced,
            kind: type.kind,
            verbs: ["get", "patch", "update"],
          },
        ]
      : [];
  return [main, ...status, ...(type.plural === "pods" ? [podLog] : [])];
}

// Served by subresources/pod-log.ts.
const podLog: ApiResource = {
  name: "pods/log",
  singularName: "",
  namespaced: true,
  kind: "Pod",
  verbs: ["get"],
};

const selfSubjectAccessReviews: ApiResource = {
  name: "selfsubjectaccessreviews",
  singularName: "selfsubjectaccessreview",
  namespaced: false,
  kind: "SelfSubjectAccessReview",
  verbs: ["create"],
};

export function versionInfo(config: ClusterConfig): Record<string, string> {
  const [, major = "1", minor = "0"] = /^v([0-9]+)\.([0-9]+)/.exec(config.kubernetes.version) ?? [];
  return {
    major,
    minor,
    gitVersion: config.kubernetes.version,
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean",
    buildDate: "2025-09-01T00:00:00Z",
    goVersion: "go1.24.6",
    compiler: "gc",
    platform: "linux/amd64",
  };
}

export function kubevirtVersionInfo(config: ClusterConfig): Record<string, string> {
  return {
    gitVersion: config.kubevirt.version,
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean",
    buildDate: "2025-09-01T00:00:00Z",
    goVersion: "go1.24.6",
    compiler: "gc",
    platform: "linux/amd64",
  };
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

const groups = [authorizationGroup, coordinationGroup, networkingGroup, "kubevirt.io", subresourcesGroup];

function apiGroup(name: string): Record<string, unknown> {
  const version = { groupVersion: `${name}/v1`, version: "v1" };
  return { name, versions: [version], preferredVersion: version };
}

export function apiGroupList(): Record<string, unknown> {
  return { kind: "APIGroupList", apiVersion: "v1", groups: groups.map(apiGroup) };
}

export function apiGroupDocument(group: string): Record<string, unknown> | undefined {
  return groups.includes(group) ? { kind: "APIGroup", apiVersion: "v1", ...apiGroup(group) } : undefined;
}

/** The APIResourceList of a group/version, or undefined when the emulator does not serve it. */
export function apiResourceList(group: string, version: string): Record<string, unknown> | undefined {
  if (version !== "v1") return undefined;
  let resources: ApiResource[];
  if (group === subresourcesGroup) {
    resources = kubevirtSubresources.map((sub) => ({
      name: sub.name,
      singularName: "",
      namespaced: true,
      kind: "",
      verbs: sub.verbs,
    }));
  } else if (group === authorizationGroup) {
    resources = [selfSubjectAccessReviews];
  } else {
    const types = resourceTypes.filter((type) => type.group === group && type.version === version);
    if (types.length === 0) return undefined;
    resources = types.flatMap(describe);
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: group === "" ? version : `${group}/${version}`,
    resources,
  };
}
