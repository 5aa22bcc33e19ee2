// The RBAC that deploy/ gives the BFF, checked with the emulator's authorizer: the service account may
// do exactly what the BFF needs and nothing else, above all nothing that creates pods in the privileged
// VM namespace. Also checks that what `kubectl kustomize` builds is what these tests read.
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { ResourceAttributes } from "./attributes.ts";
import { createRbacAuthorizer, forbiddenMessage, loadRbacFiles, parseRbacDocuments } from "./rbac.ts";
import { authenticatedUser, serviceAccountUsername } from "./users.ts";

const run = promisify(execFile);

/** The parts of `kubectl kustomize` output these tests look at. */
interface BuiltObject {
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec?: { template?: { spec?: { volumes?: { name: string; configMap?: { name: string } }[] } } };
}

function labsVolumeOf(objects: BuiltObject[]): string | undefined {
  const deployment = objects.find((object) => object.kind === "Deployment");
  return deployment?.spec?.template?.spec?.volumes?.find((volume) => volume.name === "labs")?.configMap?.name;
}
const repository = fileURLToPath(new URL("../../../", import.meta.url));
const base = path.join(repository, "deploy/base");
const policy = loadRbacFiles([base]);
const authorizer = createRbacAuthorizer(policy);
const bff = authenticatedUser(serviceAccountUsername("lab-console", "lab-console"));

const clusterWide = [
  "list kubevirt.io/kubevirts",
  "list nodes",
  "create authorization.k8s.io/selfsubjectaccessreviews",
];
// Exactly what the BFF calls (src/server/doctor/permissions.ts lists the same with the reason for each).
const expected: Record<string, string[]> = {
  "lab-sessions": [
    ...["list", "watch", "create", "patch", "delete"].map((verb) => `${verb} kubevirt.io/virtualmachines`),
    ...["list", "watch"].map((verb) => `${verb} kubevirt.io/virtualmachineinstances`),
    "get subresources.kubevirt.io/virtualmachineinstances/console",
    "get subresources.kubevirt.io/virtualmachineinstances/vnc",
    "get subresources.kubevirt.io/virtualmachineinstances/portforward",
    "update subresources.kubevirt.io/virtualmachines/restart",
    "update subresources.kubevirt.io/virtualmachineinstances/pause",
    "update subresources.kubevirt.io/virtualmachineinstances/unpause",
    "create secrets",
    // Not called: OwnerReferencesPermissionEnforcement asks for it before a Secret may name its VM.
    "delete secrets",
    "list pods",
    "get pods/log",
    // One policy per lab that declares egress: written at its launch, stale ones listed and removed.
    ...["list", "create", "patch", "delete"].map((verb) => `${verb} networking.k8s.io/networkpolicies`),
    ...clusterWide,
  ],
  "lab-console": [
    ...["get", "list", "create", "update", "delete"].map((verb) => `${verb} coordination.k8s.io/leases`),
    ...clusterWide,
  ],
  kubevirt: clusterWide,
  default: clusterWide,
  "": clusterWide,
};

const verbs = [
  "get",
  "list",
  "watch",
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
  "impersonate",
  "bind",
  "escalate",
  "*",
];
const resources = [
  ...[
    "virtualmachines",
    "virtualmachineinstances",
    "virtualmachineinstancemigrations",
    "virtualmachineinstancereplicasets",
    "kubevirts",
  ].map((r) => `kubevirt.io/${r}`),
  ...[
    "console",
    "vnc",
    "vnc/screenshot",
    "portforward",
    "guestosinfo",
    "userlist",
    "filesystemlist",
    "pause",
    "unpause",
    "vsock",
    "usbredir",
    "softreboot",
  ].map((sub) => `subresources.kubevirt.io/virtualmachineinstances/${sub}`),
  ...["start", "stop", "restart", "migrate", "portforward", "addvolume", "expand-spec"].map(
    (sub) => `subresources.kubevirt.io/virtualmachines/${sub}`,
  ),
  ...[
    "pods",
    "pods/exec",
    "pods/attach",
    "pods/portforward",
    "pods/log",
    "pods/ephemeralcontainers",
    "pods/proxy",
    "secrets",
    "configmaps",
  ],
  ...[
    "serviceaccounts",
    "serviceaccounts/token",
    "services",
    "services/proxy",
    "endpoints",
    "namespaces",
    "nodes",
    "nodes/proxy",
    "persistentvolumeclaims",
    "events",
  ],
  ...[
    "apps/deployments",
    "apps/daemonsets",
    "apps/statefulsets",
    "batch/jobs",
    "batch/cronjobs",
    "coordination.k8s.io/leases",
    "networking.k8s.io/networkpolicies",
  ],
  ...[
    "rbac.authorization.k8s.io/roles",
    "rbac.authorization.k8s.io/rolebindings",
    "rbac.authorization.k8s.io/clusterroles",
    "rbac.authorization.k8s.io/clusterrolebindings",
  ],
  ...[
    "authorization.k8s.io/selfsubjectaccessreviews",
    "authorization.k8s.io/subjectaccessreviews",
    "authentication.k8s.io/tokenreviews",
    "*",
  ],
];

function attributesOf(verb: string, groupResource: string, namespace: string): ResourceAttributes {
  // "group/resource[/subresource]" when the first part has a dot or is a known group, else core.
  const parts = groupResource.split("/");
  const grouped =
    parts.length > 1 && (parts[0]?.includes(".") || parts[0] === "apps" || parts[0] === "batch");
  const [apiGroup, resource = "", ...subresource] = grouped ? parts : ["", ...parts];
  const collection = ["list", "watch", "create", "deletecollection"].includes(verb);
  return {
    kind: "resource",
    verb,
    apiGroup: apiGroup ?? "",
    resource,
    subresource: subresource.join("/"),
    namespace,
    name: collection ? "" : "obj",
  };
}

describe("deploy/base RBAC for the BFF", () => {
  it("grants the BFF's service account exactly the listed verbs, in each namespace and cluster-wide", () => {
    for (const [namespace, grants] of Object.entries(expected)) {
      const granted = verbs.flatMap((verb) =>
        resources
          .filter((resource) => authorizer.authorize(bff, attributesOf(verb, resource, namespace)).allowed)
          .map((resource) => `${verb} ${resource}`),
      );
      expect(granted.sort(), `namespace "${namespace}"`).toEqual([...grants].sort());
    }
  });

  it("reads its own VM namespace object (the doctor's Pod Security check) and no other", () => {
    const getNamespace = (name: string) =>
      authorizer.authorize(bff, { ...attributesOf("get", "namespaces", name), name }).allowed;
    expect(getNamespace("lab-sessions")).toBe(true);
    expect(getNamespace("lab-console")).toBe(false);
    expect(getNamespace("kube-system")).toBe(false);
  });

  it("reads only /version and /metrics outside the API", () => {
    const paths = [
      "/version",
      "/metrics",
      "/api",
      "/apis",
      "/healthz",
      "/logs",
      "/debug/pprof/",
      "/openapi/v2",
    ];
    const readable = paths.filter(
      (p) => authorizer.authorize(bff, { kind: "nonResource", verb: "get", path: p }).allowed,
    );
    expect(readable).toEqual(["/version", "/metrics"]);
  });

  it("refuses pods, exec and secret contents in the privileged namespace with the API server's message", () => {
    const createPod = attributesOf("create", "pods", "lab-sessions");
    expect(authorizer.authorize(bff, createPod)).toEqual({ allowed: false, reason: "" });
    expect(forbiddenMessage(bff, createPod)).toBe(
      'pods is forbidden: User "system:serviceaccount:lab-console:lab-console" cannot create resource "pods" in API group "" in the namespace "lab-sessions"',
    );
    expect(
      authorizer.authorize(bff, {
        ...attributesOf("create", "pods/exec", "lab-sessions"),
        name: "virt-launcher-x",
      }).allowed,
    ).toBe(false);
    for (const verb of ["get", "list", "watch"]) {
      expect(authorizer.authorize(bff, attributesOf(verb, "secrets", "lab-sessions")).allowed, verb).toBe(
        false,
      );
    }
  });

  it("uses no wildcards and gives nothing to other service accounts of either namespace", () => {
    const everyValue = [...policy.roles, ...policy.clusterRoles].flatMap((role) =>
      role.rules.flatMap((rule) => [
        ...rule.verbs,
        ...rule.apiGroups,
        ...rule.resources,
        ...rule.nonResourceURLs,
      ]),
    );
    expect(everyValue.filter((value) => value.includes("*"))).toEqual([]);
    for (const namespace of ["lab-console", "lab-sessions"]) {
      const other = authenticatedUser(serviceAccountUsername(namespace, "default"));
      const anything = verbs.some((verb) =>
        resources.some(
          (resource) => authorizer.authorize(other, attributesOf(verb, resource, "lab-sessions")).allowed,
        ),
      );
      expect(anything, namespace).toBe(false);
    }
  });

  it("is what kubectl kustomize builds, with the labs ConfigMap wired to the Deployment", async () => {
    const { stdout } = await run("kubectl", ["kustomize", base]);
    const objects = parseAllDocuments(stdout).map((document) => document.toJS() as BuiltObject);
    const byName = (list: { namespace: string; name: string }[]) =>
      [...list].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
    const built = parseRbacDocuments(objects);
    for (const key of ["roles", "clusterRoles", "roleBindings", "clusterRoleBindings"] as const) {
      expect(byName(built[key]), key).toEqual(byName(policy[key]));
    }
    // kustomize appends a content hash to the generated ConfigMap's name and must follow it in the Deployment.
    const configMapName = objects.find((object) => object.kind === "ConfigMap")?.metadata?.name;
    expect(configMapName).toMatch(/^lab-console-labs-[a-z0-9]+$/);
    expect(labsVolumeOf(objects)).toBe(configMapName);
    const vmNamespace = objects.find(
      (object) => object.kind === "Namespace" && object.metadata?.name === "lab-sessions",
    );
    expect(vmNamespace?.metadata?.labels?.["pod-security.kubernetes.io/enforce"]).toBe("privileged");
  });

  it("lists every example lab in the example overlay (kustomize cannot glob)", () => {
    const overlay = parseAllDocuments(
      readFileSync(path.join(repository, "deploy/overlays/example-labs/kustomization.yaml"), "utf8"),
    )[0]?.toJS() as { configMapGenerator: { files: string[] }[] };
    const listed = overlay.configMapGenerator
      .flatMap((generator) => generator.files)
      .map((file) => path.basename(file));
    const examples = readdirSync(path.join(repository, "labs")).filter((name) => /\.ya?ml$/.test(name));
    expect(listed.sort()).toEqual(examples.sort());
  });

  it("adds the example labs with the documented overlay command", async () => {
    // A copy with stand-in lab files, so the test does not depend on the examples' content.
    const copy = mkdtempSync(path.join(tmpdir(), "deploy-test-"));
    try {
      cpSync(path.join(repository, "deploy"), path.join(copy, "deploy"), { recursive: true });
      mkdirSync(path.join(copy, "labs"));
      const labs = ["linux-basics", "nested-kvm", "git-workflow", "screen-basics"];
      for (const lab of labs) writeFileSync(path.join(copy, "labs", `${lab}.yaml`), `id: ${lab}\n`);
      const overlay = path.join(copy, "deploy/overlays/example-labs");
      const { stdout } = await run("kubectl", [
        "kustomize",
        "--load-restrictor",
        "LoadRestrictionsNone",
        overlay,
      ]);
      const objects = parseAllDocuments(stdout).map((document) => document.toJS() as BuiltObject);
      const configMaps = objects.filter((object) => object.kind === "ConfigMap");
      expect(configMaps).toHaveLength(1);
      expect(configMaps[0]?.data).toEqual(
        Object.fromEntries(labs.map((lab) => [`${lab}.yaml`, `id: ${lab}\n`])),
      );
      expect(labsVolumeOf(objects)).toBe(configMaps[0]?.metadata?.name);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
