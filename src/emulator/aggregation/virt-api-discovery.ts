// The discovery documents virt-api serves, which kube-apiserver's aggregator reads to list the group's
// resources and to call the APIService Available (it GETs /apis/GROUP/VERSION and wants a 2xx:
// k8s.io/kube-aggregator v0.34.3 pkg/controllers/status/remote/remote_available_controller.go). They
// follow KubeVirt v1.9.0 pkg/virt-api/api.go (composeSubresources, subresourceAPIGroup): the root's
// paths, one APIGroup with both versions, and per version an APIResourceList of names only, with no
// verbs and no kind. So `kubectl api-resources` shows none of them on a real cluster either: it skips
// resources without verbs. The emulator's own front door lists them with verbs
// (apiserver/discovery.ts), a difference kept on purpose there for its own kubectl tests.
import { subresourcesGroup } from "../cluster/resources.ts";
import { subresourceVersions } from "./virt-api-service.ts";

// pkg/virt-api/api.go's list, in its order: all that virt-api serves, whether or not the emulator
// implements it (those it does not are its own 404).
const resourceNames = [
  "expand-vm-spec",
  "virtualmachineinstances/vnc",
  "virtualmachineinstances/vnc/screenshot",
  "virtualmachineinstances/console",
  "virtualmachineinstances/portforward",
  "virtualmachineinstances/backup",
  "virtualmachineinstances/redefine-checkpoint",
  "virtualmachineinstances/pause",
  "virtualmachineinstances/unpause",
  "virtualmachineinstances/freeze",
  "virtualmachineinstances/unfreeze",
  "virtualmachineinstances/reset",
  "virtualmachineinstances/softreboot",
  "virtualmachines/start",
  "virtualmachines/stop",
  "virtualmachines/restart",
  "virtualmachines/migrate",
  "virtualmachines/expand-spec",
  "virtualmachines/objectgraph",
  "virtualmachines/evacuate/cancel",
  "virtualmachineinstances/guestosinfo",
  "virtualmachineinstances/userlist",
  "virtualmachineinstances/filesystemlist",
  "virtualmachineinstances/addvolume",
  "virtualmachineinstances/removevolume",
  "virtualmachineinstances/objectgraph",
  "virtualmachineinstances/sev/fetchcertchain",
  "virtualmachineinstances/sev/querylaunchmeasurement",
  "virtualmachineinstances/sev/setupsession",
  "virtualmachineinstances/sev/injectlaunchsecret",
  "virtualmachineinstances/evacuate/cancel",
];

const groupPath = `/apis/${subresourcesGroup}`;

function apiGroup(): Record<string, unknown> {
  const versions = subresourceVersions.map((version) => ({
    groupVersion: `${subresourcesGroup}/${version}`,
    version,
  }));
  return {
    kind: "APIGroup",
    // WARNING: "subresource", not "subresources": virt-api's subresourceAPIGroup names its group so.
    // Clients never see it through kube-apiserver, which writes the group's document itself.
    name: "subresource.kubevirt.io",
    versions,
    preferredVersion: versions[0],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "" }],
  };
}

function apiResourceList(version: string): Record<string, unknown> {
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: `${subresourcesGroup}/${version}`,
    // Go's encoding of an APIResource with only Name and Namespaced set.
    resources: resourceNames.map((name) => ({
      name,
      singularName: "",
      namespaced: true,
      kind: "",
      verbs: null,
    })),
  };
}

/** The discovery document at `path` (no trailing slash), or undefined when it is not one. */
export function virtApiDiscovery(path: string): Record<string, unknown> | undefined {
  if (path === "/") {
    return {
      paths: [
        "/apis",
        "/openapi/v2",
        ...subresourceVersions.flatMap((version) => [groupPath, `${groupPath}/${version}`]),
      ],
    };
  }
  if (path === "/apis") return { kind: "APIGroupList", groups: [apiGroup()] };
  if (path === groupPath) return apiGroup();
  const version = subresourceVersions.find((candidate) => path === `${groupPath}/${candidate}`);
  return version === undefined ? undefined : apiResourceList(version);
}
