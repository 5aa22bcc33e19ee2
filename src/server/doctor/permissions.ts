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
  { verb: "create", group: "", resource: "secrets", scope: "vm-namespace", why: "each session's cloud-init" },
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
  /** fail: a way to root on the nodes; warn: reads more than the console should. */
  severity: "fail" | "warn";
  what: string;
}

/**
 * In the VM namespace, which runs the privileged Pod Security level: creating a pod there, directly,
 * by exec/attach into a virt-launcher pod or through a workload controller, is root on a node.
 */
export const forbiddenPermissions: readonly ForbiddenPermission[] = [
  { verb: "create", group: "", resource: "pods", severity: "fail", what: "create pods" },
  {
    verb: "create",
    group: "",
    resource: "pods",
    subresource: "exec",
    severity: "fail",
    what: "exec into pods",
  },
  {
    verb: "create",
    group: "",
    resource: "pods",
    subresource: "attach",
    severity: "fail",
    what: "attach to pods",
  },
  {
    verb: "patch",
    group: "",
    resource: "pods",
    subresource: "ephemeralcontainers",
    severity: "fail",
    what: "add ephemeral containers to pods",
  },
  ...["deployments", "replicasets", "statefulsets", "daemonsets"].map((resource) => ({
    verb: "create",
    group: "apps",
    resource,
    severity: "fail" as const,
    what: `create ${resource}`,
  })),
  ...["jobs", "cronjobs"].map((resource) => ({
    verb: "create",
    group: "batch",
    resource,
    severity: "fail" as const,
    what: `create ${resource}`,
  })),
  { verb: "get", group: "", resource: "secrets", severity: "warn", what: "read Secrets" },
  { verb: "list", group: "", resource: "secrets", severity: "warn", what: "list Secrets" },
];

/** "create pods", "get virtualmachineinstances/console.subresources.kubevirt.io", "get /metrics". */
export function describePermission(permission: Permission | ForbiddenPermission): string {
  if ("path" in permission) return `${permission.verb} ${permission.path}`;
  const resource = permission.subresource
    ? `${permission.resource}/${permission.subresource}`
    : permission.resource;
  return `${permission.verb} ${resource}${permission.group ? `.${permission.group}` : ""}`;
}
