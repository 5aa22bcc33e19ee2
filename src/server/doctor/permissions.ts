// What the console's credentials must allow, and what they must not. deploy/base grants exactly the
// first list (src/emulator/rbac/deploy-rbac.test.ts holds the two to each other); the doctor asks the
// API server about both with SelfSubjectAccessReviews.

/**
 * Where a permission applies: the VM namespace (LAB_NAMESPACE), the console's own namespace where its
 * replicas keep their leases (asked only when coordination is on), or cluster-wide.
 */
export type PermissionScope = "vm-namespace" | "lease-namespace" | "cluster";

export type Permission =
  | {
      verb: string;
      group: string;
      resource: string;
      subresource?: string;
      scope: PermissionScope;
      /** Only this object (the VM namespace itself, for `namespaces`). */
      onlyTheNamespace?: boolean;
      /** What breaks without it, in a few words. */
      why: string;
    }
  | { verb: string; path: string; scope: "cluster"; why: string };

const kubevirt = "kubevirt.io";
const subresources = "subresources.kubevirt.io";

export const requiredPermissions: readonly Permission[] = [
  ...["list", "watch"].map((verb) => ({
    verb,
    group: kubevirt,
    resource: "virtualmachines",
    scope: "vm-namespace" as const,
    why: "showing sessions",
  })),
  { verb: "create", group: kubevirt, resource: "virtualmachines", scope: "vm-namespace", why: "launching" },
  {
    verb: "patch",
    group: kubevirt,
    resource: "virtualmachines",
    scope: "vm-namespace",
    why: "extending a session",
  },
  {
    verb: "delete",
    group: kubevirt,
    resource: "virtualmachines",
    scope: "vm-namespace",
    why: "ending sessions and reaping expired ones",
  },
  ...["list", "watch"].map((verb) => ({
    verb,
    group: kubevirt,
    resource: "virtualmachineinstances",
    scope: "vm-namespace" as const,
    why: "session status",
  })),
  {
    verb: "get",
    group: subresources,
    resource: "virtualmachineinstances",
    subresource: "console",
    scope: "vm-namespace",
    why: "the serial console",
  },
  {
    verb: "get",
    group: subresources,
    resource: "virtualmachineinstances",
    subresource: "vnc",
    scope: "vm-namespace",
    why: "the graphical console (labs whose session.consoles has graphical)",
  },
  {
    verb: "get",
    group: subresources,
    resource: "virtualmachineinstances",
    subresource: "portforward",
    scope: "vm-namespace",
    why: "grading (the agent's port)",
  },
  {
    verb: "update",
    group: subresources,
    resource: "virtualmachines",
    subresource: "restart",
    scope: "vm-namespace",
    why: "restarting a session's VM",
  },
  ...(["pause", "unpause"] as const).map((subresource) => ({
    verb: "update",
    group: subresources,
    resource: "virtualmachineinstances",
    subresource,
    scope: "vm-namespace" as const,
    why: subresource === "pause" ? "pausing an idle session's VM" : "resuming a paused session",
  })),
  { verb: "create", group: "", resource: "secrets", scope: "vm-namespace", why: "each session's cloud-init" },
  {
    verb: "delete",
    group: "",
    resource: "secrets",
    scope: "vm-namespace",
    why:
      "a warm VM's claim replaces its cloud-init with the session's, and OwnerReferencesPermissionEnforcement " +
      "(on in OpenShift and CIS-hardened clusters) needs delete on a Secret to create it with an ownerReference",
  },
  {
    verb: "list",
    group: "",
    resource: "pods",
    scope: "vm-namespace",
    why: "finding a VM's pod for its boot log",
  },
  {
    verb: "get",
    group: "",
    resource: "pods",
    subresource: "log",
    scope: "vm-namespace",
    why: "the boot log (serial console log)",
  },
  ...["list", "create", "patch", "delete"].map((verb) => ({
    verb,
    group: "networking.k8s.io",
    resource: "networkpolicies",
    scope: "vm-namespace" as const,
    why: "the network egress labs declare: one NetworkPolicy per lab",
  })),
  ...["get", "list", "create", "update", "delete"].map((verb) => ({
    verb,
    group: "coordination.k8s.io",
    resource: "leases",
    scope: "lease-namespace" as const,
    why: "sharing the reaper, grading and consoles among replicas",
  })),
  {
    verb: "get",
    group: "",
    resource: "namespaces",
    scope: "vm-namespace",
    onlyTheNamespace: true,
    why: "the doctor's Pod Security check",
  },
  {
    verb: "list",
    group: kubevirt,
    resource: "kubevirts",
    scope: "cluster",
    why: "KubeVirt's version, gates and CPU allocation ratio",
  },
  { verb: "list", group: "", resource: "nodes", scope: "cluster", why: "capacity and the KVM check" },
  {
    verb: "create",
    group: "authorization.k8s.io",
    resource: "selfsubjectaccessreviews",
    scope: "cluster",
    why: "this permission check",
  },
  { verb: "get", path: "/version", scope: "cluster", why: "the Kubernetes version, and readiness" },
  { verb: "get", path: "/metrics", scope: "cluster", why: "the API server's feature gates (ImageVolume)" },
];

export interface ForbiddenPermission {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  /** Asked in the VM namespace, or cluster-wide for cluster-scoped resources (nodes). */
  scope: "vm-namespace" | "cluster";
  /** fail: a way to root on the nodes; warn: reads more than the console should. */
  severity: "fail" | "warn";
  /** What the permission lets one do, in a few words ("create pods"). */
  what: string;
  /** Why that is dangerous (fail) or too much (warn), for the report. */
  why: string;
}

const rootThroughTheNamespace = (what: string) =>
  `That namespace admits privileged pods, so whoever may ${what} there can become root on the nodes.`;

// Up to Kubernetes 1.34 a websocket exec or attach is a GET, and the API server authorizes it as
// `get` on the subresource alone; 1.35's AuthorizePodWebsocketUpgradeCreatePermission gate (Beta, on)
// also asks for `create`, but a doctor that only asks about `create` passes a 1.34 cluster with a root path.
const websocketBeforeKubernetes135 = (subresource: string) =>
  `Up to Kubernetes 1.34 a websocket ${subresource} is a GET and needs only this verb ` +
  `(kubernetes/kubernetes#78741); the create check of 1.35's AuthorizePodWebsocketUpgradeCreatePermission ` +
  `gate (kubernetes/kubernetes#134577) is not there before, and can be turned off.`;

const nodesProxy =
  "nodes/proxy reaches every kubelet's API, which runs commands in any container on the node " +
  "(/exec, /attach, /run). The kubelet authorizes those by the HTTP method, so over a websocket (a GET) " +
  "even get is enough (kubernetes/kubernetes#136550): this is root on every node.";

/**
 * In the VM namespace, which runs the privileged Pod Security level: creating a pod there, directly,
 * by exec/attach into a virt-launcher pod or through a workload controller, is root on a node.
 * Cluster-wide: the kubelets' API through nodes/proxy, with any verb.
 */
export const forbiddenPermissions: readonly ForbiddenPermission[] = [
  {
    verb: "create",
    group: "",
    resource: "pods",
    scope: "vm-namespace",
    severity: "fail",
    what: "create pods",
    why: rootThroughTheNamespace("create pods"),
  },
  ...(["exec", "attach"] as const).flatMap((subresource) => {
    const what = subresource === "exec" ? "exec into pods" : "attach to pods";
    return [
      {
        verb: "create",
        group: "",
        resource: "pods",
        subresource,
        scope: "vm-namespace" as const,
        severity: "fail" as const,
        what,
        why: rootThroughTheNamespace(what),
      },
      {
        verb: "get",
        group: "",
        resource: "pods",
        subresource,
        scope: "vm-namespace" as const,
        severity: "fail" as const,
        what: `${what} over a websocket`,
        why: `${rootThroughTheNamespace(what)} ${websocketBeforeKubernetes135(subresource)}`,
      },
    ];
  }),
  {
    verb: "patch",
    group: "",
    resource: "pods",
    subresource: "ephemeralcontainers",
    scope: "vm-namespace",
    severity: "fail",
    what: "add ephemeral containers to pods",
    why: rootThroughTheNamespace("add ephemeral containers to pods"),
  },
  ...["deployments", "replicasets", "statefulsets", "daemonsets"].map((resource) => ({
    verb: "create",
    group: "apps",
    resource,
    scope: "vm-namespace" as const,
    severity: "fail" as const,
    what: `create ${resource}`,
    why: rootThroughTheNamespace(`create ${resource}`),
  })),
  ...["jobs", "cronjobs"].map((resource) => ({
    verb: "create",
    group: "batch",
    resource,
    scope: "vm-namespace" as const,
    severity: "fail" as const,
    what: `create ${resource}`,
    why: rootThroughTheNamespace(`create ${resource}`),
  })),
  // Every verb the API server's proxy and the kubelet map an HTTP method to.
  ...["get", "create", "update", "patch", "delete"].map((verb) => ({
    verb,
    group: "",
    resource: "nodes",
    subresource: "proxy",
    scope: "cluster" as const,
    severity: "fail" as const,
    what: "reach the kubelets' API (nodes/proxy)",
    why: nodesProxy,
  })),
  ...["get", "list"].map((verb) => ({
    verb,
    group: "",
    resource: "secrets",
    scope: "vm-namespace" as const,
    severity: "warn" as const,
    what: `${verb === "get" ? "read" : "list"} Secrets`,
    why: "every Secret there, service-account tokens included",
  })),
];

/** "create pods", "get virtualmachineinstances/console.subresources.kubevirt.io", "get /metrics". */
export function describePermission(permission: Permission | ForbiddenPermission): string {
  if ("path" in permission) return `${permission.verb} ${permission.path}`;
  const resource = permission.subresource
    ? `${permission.resource}/${permission.subresource}`
    : permission.resource;
  return `${permission.verb} ${resource}${permission.group ? `.${permission.group}` : ""}`;
}
