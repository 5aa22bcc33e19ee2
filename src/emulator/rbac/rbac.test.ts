import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { NonResourceAttributes, ResourceAttributes, UserInfo } from "./attributes.ts";
import {
  clusterDefaultsFile,
  createRbacAuthorizer,
  forbiddenMessage,
  forbiddenStatus,
  loadRbacFiles,
  parseRbacDocuments,
  type RbacPolicy,
} from "./rbac.ts";
import { authenticatedUser, serviceAccountUsername } from "./users.ts";

// A course's policy: TAs watch sessions, one TA may attach to consoles, instructors run everything
// KubeVirt in lab-sessions, a grader may touch one VM, monitoring reads nodes and metrics.
const coursePolicy = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: session-viewer }
rules:
  - apiGroups: [kubevirt.io]
    resources: [virtualmachines, virtualmachineinstances]
    verbs: [get, list, watch]
  - apiGroups: [subresources.kubevirt.io]
    resources: [virtualmachineinstances/guestosinfo]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: tas-view, namespace: lab-sessions }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: session-viewer }
subjects:
  - { apiGroup: rbac.authorization.k8s.io, kind: Group, name: teaching-assistants }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: console-attach, namespace: lab-sessions }
rules:
  - apiGroups: [subresources.kubevirt.io]
    resources: [virtualmachineinstances/console]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: console-attach, namespace: sandbox }
rules:
  - apiGroups: [subresources.kubevirt.io]
    resources: ["*/console", "*/vnc"]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: tara-console, namespace: lab-sessions }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: console-attach }
subjects:
  - { kind: User, name: tara }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: tara-console, namespace: sandbox }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: console-attach }
subjects:
  - { kind: User, name: tara }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: kubevirt-everything }
rules:
  - apiGroups: [kubevirt.io, subresources.kubevirt.io]
    resources: ["*"]
    verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: instructors, namespace: lab-sessions }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kubevirt-everything }
subjects:
  - { kind: Group, name: instructors }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: grader, namespace: lab-sessions }
rules:
  - apiGroups: [kubevirt.io]
    resources: [virtualmachines]
    resourceNames: [linux-basics-abc12345]
    verbs: [get, list, watch, create, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: grader, namespace: lab-sessions }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: grader }
subjects:
  - { kind: ServiceAccount, name: grader }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: node-reader }
rules:
  - apiGroups: [""]
    resources: [nodes]
    verbs: [get, list]
  - nonResourceURLs: [/metrics, /debug/*]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: monitoring }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-reader }
subjects:
  - { kind: ServiceAccount, name: prometheus, namespace: monitoring }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: tara-nodes, namespace: lab-sessions }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-reader }
subjects:
  - { kind: User, name: tara }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: pods-everywhere }
rules:
  - apiGroups: [""]
    resources: [pods]
    verbs: [list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: service-accounts-list-pods }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: pods-everywhere }
subjects:
  - { kind: Group, name: "system:serviceaccounts:lab-console" }
`;

function policyFrom(yamlText: string): RbacPolicy {
  return parseRbacDocuments(parseAllDocuments(yamlText).map((document) => document.toJS() as unknown));
}

function request(
  verb: string,
  apiGroup: string,
  resourcePath: string,
  namespace: string,
  name = "",
): ResourceAttributes {
  const [resource = "", ...subresource] = resourcePath.split("/");
  return { kind: "resource", verb, apiGroup, resource, subresource: subresource.join("/"), namespace, name };
}

function path_(verb: string, requestPath: string): NonResourceAttributes {
  return { kind: "nonResource", verb, path: requestPath };
}

const course = createRbacAuthorizer(policyFrom(coursePolicy));
const tara = authenticatedUser("tara", ["teaching-assistants"]);
const ivan = authenticatedUser("ivan", ["instructors"]);
const grader = authenticatedUser(serviceAccountUsername("lab-sessions", "grader"));
const prometheus = authenticatedUser(serviceAccountUsername("monitoring", "prometheus"));

function allowed(user: UserInfo, attributes: ResourceAttributes | NonResourceAttributes): boolean {
  return course.authorize(user, attributes).allowed;
}

describe("RBAC rules", () => {
  it("applies a RoleBinding to a Role of its own namespace only", () => {
    expect(
      allowed(
        tara,
        request("get", "subresources.kubevirt.io", "virtualmachineinstances/console", "lab-sessions", "vm1"),
      ),
    ).toBe(true);
    expect(
      allowed(
        tara,
        request("get", "subresources.kubevirt.io", "virtualmachineinstances/console", "default", "vm1"),
      ),
    ).toBe(false);
    // The sandbox binding refers to sandbox's own console-attach Role, which also grants VNC.
    expect(
      allowed(
        tara,
        request("get", "subresources.kubevirt.io", "virtualmachineinstances/vnc", "sandbox", "vm1"),
      ),
    ).toBe(true);
    expect(
      allowed(
        tara,
        request("get", "subresources.kubevirt.io", "virtualmachineinstances/vnc", "lab-sessions", "vm1"),
      ),
    ).toBe(false);
  });

  it("scopes a ClusterRole bound by a RoleBinding to the binding's namespace", () => {
    expect(allowed(tara, request("watch", "kubevirt.io", "virtualmachineinstances", "lab-sessions"))).toBe(
      true,
    );
    expect(allowed(tara, request("watch", "kubevirt.io", "virtualmachineinstances", "default"))).toBe(false);
    expect(allowed(tara, request("watch", "kubevirt.io", "virtualmachineinstances", ""))).toBe(false);
    // node-reader through a RoleBinding: nodes are cluster-scoped, so it never applies.
    expect(allowed(tara, request("get", "", "nodes", "", "node1"))).toBe(false);
    expect(allowed(tara, path_("get", "/metrics"))).toBe(false);
  });

  it("applies a ClusterRoleBinding everywhere, cluster scope and non-resource paths included", () => {
    expect(allowed(prometheus, request("list", "", "nodes", ""))).toBe(true);
    expect(allowed(prometheus, path_("get", "/metrics"))).toBe(true);
    expect(allowed(prometheus, request("delete", "", "nodes", "", "node1"))).toBe(false);
  });

  it("matches subjects: users, groups, service accounts with and without a namespace", () => {
    const user = authenticatedUser("someone-else", []);
    expect(allowed(user, request("get", "kubevirt.io", "virtualmachines", "lab-sessions", "vm1"))).toBe(
      false,
    );
    expect(
      allowed(
        authenticatedUser("tara"),
        request("get", "kubevirt.io", "virtualmachines", "lab-sessions", "x"),
      ),
    ).toBe(false);
    // The grader's subject has no namespace: the RoleBinding's own (lab-sessions) is meant.
    expect(
      allowed(
        grader,
        request("get", "kubevirt.io", "virtualmachines", "lab-sessions", "linux-basics-abc12345"),
      ),
    ).toBe(true);
    const sameNameElsewhere = authenticatedUser(serviceAccountUsername("default", "grader"));
    expect(
      allowed(
        sameNameElsewhere,
        request("get", "kubevirt.io", "virtualmachines", "lab-sessions", "linux-basics-abc12345"),
      ),
    ).toBe(false);
    // The prometheus binding names its namespace: the same name in another namespace gets nothing.
    expect(
      allowed(authenticatedUser(serviceAccountUsername("default", "prometheus")), path_("get", "/metrics")),
    ).toBe(false);
    // Group system:serviceaccounts:<namespace> comes with every service account token of that namespace.
    const bff = authenticatedUser(serviceAccountUsername("lab-console", "anything"));
    expect(allowed(bff, request("list", "", "pods", "kube-system"))).toBe(true);
    expect(allowed(grader, request("list", "", "pods", "kube-system"))).toBe(false);
  });

  it("treats resource/subresource as its own resource, and */subresource and * as wildcards", () => {
    // Watching VMIs does not grant their console, and a console grant does not grant the VMI.
    expect(
      allowed(
        tara,
        request(
          "get",
          "subresources.kubevirt.io",
          "virtualmachineinstances/guestosinfo",
          "lab-sessions",
          "vm1",
        ),
      ),
    ).toBe(true);
    expect(
      allowed(
        tara,
        request("get", "kubevirt.io", "virtualmachineinstances/guestosinfo", "lab-sessions", "vm1"),
      ),
    ).toBe(false);
    expect(
      allowed(
        tara,
        request("get", "subresources.kubevirt.io", "virtualmachineinstances", "lab-sessions", "vm1"),
      ),
    ).toBe(false);
    // "*/console" covers console of any resource, but not a deeper subresource.
    expect(
      allowed(tara, request("get", "subresources.kubevirt.io", "virtualmachines/console", "sandbox", "vm1")),
    ).toBe(true);
    expect(
      allowed(
        tara,
        request(
          "get",
          "subresources.kubevirt.io",
          "virtualmachineinstances/vnc/screenshot",
          "sandbox",
          "vm1",
        ),
      ),
    ).toBe(false);
    // "*" resources and "*" verbs cover subresources and every verb, in the listed groups only.
    expect(
      allowed(
        ivan,
        request("update", "subresources.kubevirt.io", "virtualmachines/restart", "lab-sessions", "vm1"),
      ),
    ).toBe(true);
    expect(
      allowed(ivan, request("deletecollection", "kubevirt.io", "virtualmachineinstances", "lab-sessions")),
    ).toBe(true);
    expect(allowed(ivan, request("create", "", "pods", "lab-sessions"))).toBe(false);
  });

  it("matches resourceNames only for requests that name that object", () => {
    const named = (verb: string, name: string) =>
      allowed(grader, request(verb, "kubevirt.io", "virtualmachines", "lab-sessions", name));
    expect(named("get", "linux-basics-abc12345")).toBe(true);
    expect(named("update", "linux-basics-abc12345")).toBe(true);
    expect(named("get", "linux-basics-zzz99999")).toBe(false);
    // Collection requests have no name, so a resourceNames rule never covers them.
    expect(named("list", "")).toBe(false);
    expect(named("watch", "")).toBe(false);
    expect(named("create", "")).toBe(false);
  });

  it("matches nonResourceURLs exactly or by a trailing * prefix", () => {
    expect(allowed(prometheus, path_("get", "/debug/pprof/heap"))).toBe(true);
    expect(allowed(prometheus, path_("get", "/debug/"))).toBe(true);
    expect(allowed(prometheus, path_("get", "/debug"))).toBe(false);
    expect(allowed(prometheus, path_("get", "/metrics/slis"))).toBe(false);
    expect(allowed(prometheus, path_("post", "/metrics"))).toBe(false);
  });

  it("lets super users and super groups (system:masters unless told otherwise) do everything", () => {
    const policy = policyFrom(coursePolicy);
    const anything = request("create", "", "pods", "lab-sessions");
    const plain = createRbacAuthorizer(policy);
    expect(plain.authorize(authenticatedUser("root", ["system:masters"]), anything).allowed).toBe(true);
    expect(plain.authorize(authenticatedUser("admin"), anything).allowed).toBe(false);
    const configured = createRbacAuthorizer(policy, {
      superUsers: ["admin"],
      superGroups: ["emulator:admins"],
    });
    expect(configured.authorize(authenticatedUser("admin"), anything)).toEqual({ allowed: true, reason: "" });
    expect(
      configured.authorize(authenticatedUser("x", ["emulator:admins"]), path_("delete", "/x")).allowed,
    ).toBe(true);
    expect(configured.authorize(authenticatedUser("root", ["system:masters"]), anything).allowed).toBe(false);
  });

  it("says which binding allowed a request, in the API server's words", () => {
    expect(
      course.authorize(
        grader,
        request("get", "kubevirt.io", "virtualmachines", "lab-sessions", "linux-basics-abc12345"),
      ),
    ).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by RoleBinding "grader/lab-sessions" of Role "grader" to ServiceAccount "grader/lab-sessions"',
    });
    expect(course.authorize(prometheus, path_("get", "/metrics"))).toEqual({
      allowed: true,
      reason:
        'RBAC: allowed by ClusterRoleBinding "monitoring" of ClusterRole "node-reader" to ServiceAccount "prometheus/monitoring"',
    });
    expect(
      course.authorize(tara, request("list", "kubevirt.io", "virtualmachines", "lab-sessions")).reason,
    ).toBe(
      'RBAC: allowed by RoleBinding "tas-view/lab-sessions" of ClusterRole "session-viewer" to Group "teaching-assistants"',
    );
    expect(
      course.authorize(tara, request("delete", "kubevirt.io", "virtualmachines", "lab-sessions", "vm1")),
    ).toEqual({
      allowed: false,
      reason: "",
    });
  });

  it("reports bindings to roles that do not exist, as the API server appends to its 403", () => {
    const authorizer = createRbacAuthorizer(
      policyFrom(`
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: typo, namespace: lab-sessions }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: sesion-viewer }
subjects: [{ kind: User, name: mallory }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: typo }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: viewer }
subjects: [{ kind: User, name: mallory }]
`),
    );
    const mallory = authenticatedUser("mallory");
    const attributes = request("list", "kubevirt.io", "virtualmachines", "lab-sessions");
    const decision = authorizer.authorize(mallory, attributes);
    expect(decision).toEqual({
      allowed: false,
      reason:
        'RBAC: [clusterrole.rbac.authorization.k8s.io "viewer" not found, role.rbac.authorization.k8s.io "sesion-viewer" not found]',
    });
    expect(authorizer.authorize(mallory, request("get", "", "nodes", "")).reason).toBe(
      'RBAC: clusterrole.rbac.authorization.k8s.io "viewer" not found',
    );
    expect(forbiddenMessage(mallory, attributes, decision.reason)).toBe(
      'virtualmachines.kubevirt.io is forbidden: User "mallory" cannot list resource "virtualmachines" in API group "kubevirt.io" in the namespace "lab-sessions": ' +
        decision.reason,
    );
  });

  it("ships the cluster defaults that let any authenticated client discover the API and ask can-i", () => {
    const authorizer = createRbacAuthorizer(loadRbacFiles([clusterDefaultsFile]));
    const student = authenticatedUser("alice");
    expect(authorizer.authorize(student, path_("get", "/apis/kubevirt.io/v1")).allowed).toBe(true);
    expect(authorizer.authorize(student, path_("get", "/version")).allowed).toBe(true);
    expect(authorizer.authorize(student, path_("get", "/metrics")).allowed).toBe(false);
    expect(
      authorizer.authorize(student, request("create", "authorization.k8s.io", "selfsubjectaccessreviews", ""))
        .allowed,
    ).toBe(true);
    expect(
      authorizer.authorize(student, request("list", "kubevirt.io", "kubevirts", "kubevirt")).allowed,
    ).toBe(true);
    expect(
      authorizer.authorize(student, request("list", "kubevirt.io", "virtualmachines", "default")).allowed,
    ).toBe(false);
    // Without the authenticator's system:authenticated group nothing applies.
    expect(authorizer.authorize({ username: "alice", groups: [] }, path_("get", "/api")).allowed).toBe(false);
  });
});

describe("forbiddenMessage", () => {
  const bff = { username: "system:serviceaccount:lab-console:lab-console", groups: [] };
  const x = { username: "x", groups: [] };

  it("names the object, the verb, the resource, the group and the namespace", () => {
    expect(
      forbiddenMessage(bff, request("delete", "kubevirt.io", "virtualmachines", "lab-sessions", "vm1")),
    ).toBe(
      'virtualmachines.kubevirt.io "vm1" is forbidden: User "system:serviceaccount:lab-console:lab-console" cannot delete resource "virtualmachines" in API group "kubevirt.io" in the namespace "lab-sessions"',
    );
    expect(forbiddenMessage(x, request("create", "", "pods", "lab-sessions"))).toBe(
      'pods is forbidden: User "x" cannot create resource "pods" in API group "" in the namespace "lab-sessions"',
    );
  });

  it("qualifies subresources by resource.group and names them in full after the verb", () => {
    expect(
      forbiddenMessage(
        x,
        request("get", "subresources.kubevirt.io", "virtualmachineinstances/console", "ns", "vmi1"),
      ),
    ).toBe(
      'virtualmachineinstances.subresources.kubevirt.io "vmi1" is forbidden: User "x" cannot get resource "virtualmachineinstances/console" in API group "subresources.kubevirt.io" in the namespace "ns"',
    );
  });

  it("words cluster-scoped and non-resource requests like the API server", () => {
    expect(forbiddenMessage(x, request("list", "", "nodes", ""))).toBe(
      'nodes is forbidden: User "x" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    expect(forbiddenMessage(x, request("get", "kubevirt.io", "kubevirts", "", "kubevirt"))).toBe(
      'kubevirts.kubevirt.io "kubevirt" is forbidden: User "x" cannot get resource "kubevirts" in API group "kubevirt.io" at the cluster scope',
    );
    expect(forbiddenMessage(x, path_("get", "/metrics"))).toBe(
      'forbidden: User "x" cannot get path "/metrics"',
    );
  });

  it("escapes HTML in the description but not in the object's name, and quotes like Go", () => {
    const odd = { username: 'eve<script>&"', groups: [] };
    expect(forbiddenMessage(odd, request("get", "", "configmaps", "ns", "a<b"))).toBe(
      'configmaps "a<b" is forbidden: User "eve&lt;script&gt;&amp;\\"" cannot get resource "configmaps" in API group "" in the namespace "ns"',
    );
  });

  it("builds the Status body of the 403", () => {
    expect(
      forbiddenStatus(
        x,
        request("get", "subresources.kubevirt.io", "virtualmachineinstances/console", "ns", "vmi1"),
      ),
    ).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'virtualmachineinstances.subresources.kubevirt.io "vmi1" is forbidden: User "x" cannot get resource "virtualmachineinstances/console" in API group "subresources.kubevirt.io" in the namespace "ns"',
      reason: "Forbidden",
      details: { name: "vmi1", group: "subresources.kubevirt.io", kind: "virtualmachineinstances" },
      code: 403,
    });
    expect(forbiddenStatus(x, request("create", "", "pods", "ns")).details).toEqual({ kind: "pods" });
    expect(forbiddenStatus(x, path_("get", "/metrics")).details).toEqual({});
  });
});

describe("loading policy files", () => {
  const folder = mkdtempSync(path.join(tmpdir(), "rbac-test-"));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  let counter = 0;
  function file(text: string, name = `policy-${(counter += 1)}.yaml`): string {
    const filePath = path.join(folder, name);
    writeFileSync(filePath, text);
    return filePath;
  }

  const role = (extra: string) => `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: r
  namespace: ns
rules:
  - apiGroups: [""]
    resources: [pods]
${extra}`;

  it("reads RBAC objects from multi-document files and skips every other kind", () => {
    const policy = loadRbacFiles([
      file(`apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: ns }
spec: { replicas: 1 }
---
# just a comment
---
${role("    verbs: [get]")}
---
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [a.yaml]
---
apiVersion: v1
kind: List
items:
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRoleBinding
    metadata: { name: b }
    roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: c }
    subjects: [{ kind: ServiceAccount, name: s, namespace: ns }]
`),
    ]);
    expect(policy).toEqual({
      roles: [
        {
          name: "r",
          namespace: "ns",
          rules: [
            { verbs: ["get"], apiGroups: [""], resources: ["pods"], resourceNames: [], nonResourceURLs: [] },
          ],
        },
      ],
      clusterRoles: [],
      roleBindings: [],
      clusterRoleBindings: [
        {
          name: "b",
          namespace: "",
          roleRef: { kind: "ClusterRole", name: "c" },
          subjects: [{ kind: "ServiceAccount", name: "s", namespace: "ns" }],
        },
      ],
      notes: [],
    });
  });

  it("reads every .yaml file of a directory", () => {
    const directory = path.join(folder, "base");
    mkdirSync(directory);
    writeFileSync(path.join(directory, "a.yaml"), role("    verbs: [get]"));
    writeFileSync(path.join(directory, "b.yml"), role("    verbs: [list]").replace("name: r", "name: r2"));
    writeFileSync(path.join(directory, "notes.txt"), "not yaml: [");
    expect(loadRbacFiles([directory]).roles.map((each) => each.name)).toEqual(["r", "r2"]);
  });

  it("keeps an aggregated ClusterRole's own rules and says aggregation is not evaluated", () => {
    const filePath = file(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: monitoring }
aggregationRule:
  clusterRoleSelectors: [{ matchLabels: { rbac.example.com/aggregate-to-monitoring: "true" } }]
rules: []
`);
    const policy = loadRbacFiles([filePath]);
    expect(policy.clusterRoles).toEqual([{ name: "monitoring", namespace: "", rules: [] }]);
    expect(policy.notes).toEqual([
      `${filePath}:1: ClusterRole "monitoring" has an aggregationRule: the emulator does not aggregate, only its own rules apply`,
    ]);
  });

  it.each([
    [
      "a typo that would widen a rule",
      role("    verbs: [get]\n    resourceName: [one]"),
      10,
      'Role "ns/r": unknown field "rules[0].resourceName"',
    ],
    [
      "a rule without verbs",
      role(""),
      7,
      'Role "ns/r": rules[0].verbs: Required value: verbs must contain at least one value',
    ],
    [
      "a namespaced rule for a path",
      role("    verbs: [get]\n  - nonResourceURLs: [/metrics]\n    verbs: [get]"),
      10,
      'Role "ns/r": rules[1].nonResourceURLs: Invalid value: namespaced rules cannot apply to non-resource URLs',
    ],
    [
      "a Role without a namespace",
      role("    verbs: [get]").replace("  namespace: ns\n", ""),
      4,
      'Role "r": metadata.namespace: Required value',
    ],
    [
      "a ClusterRoleBinding to a Role",
      `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: b }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: r }
`,
      4,
      'ClusterRoleBinding "b": roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
    ],
    [
      "a cluster-wide service account subject without a namespace",
      `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: b }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: r }
subjects:
  - kind: ServiceAccount
    name: s
`,
      6,
      'ClusterRoleBinding "b": subjects[0].namespace: Required value',
    ],
    [
      "a subject of an unknown kind",
      `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: b, namespace: ns }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: r }
subjects:
  - { kind: Serviceaccount, name: s }
`,
      6,
      'RoleBinding "ns/b": subjects[0].kind: Unsupported value: "Serviceaccount": supported values: "ServiceAccount", "User", "Group"',
    ],
    [
      "a removed API version",
      role("    verbs: [get]").replace("/v1", "/v1beta1"),
      1,
      'Role "ns/r": apiVersion rbac.authorization.k8s.io/v1beta1 is not served since Kubernetes 1.22 (use rbac.authorization.k8s.io/v1)',
    ],
  ])("refuses %s, naming the file and line", (_case, text, line, problem) => {
    const filePath = file(text);
    expect(() => loadRbacFiles([filePath])).toThrow(`${filePath}:${line}: ${problem}`);
  });

  it("refuses broken YAML, a missing file and an object defined twice", () => {
    const broken = file("kind: Role\nrules: [\n");
    expect(() => loadRbacFiles([broken])).toThrow(new RegExp(`^${broken}: invalid YAML: `));
    const missing = path.join(folder, "missing.yaml");
    expect(() => loadRbacFiles([missing])).toThrow(`${missing}: cannot read: ENOENT`);
    const first = file(role("    verbs: [get]"));
    const second = file(`# the same Role again\n${role("    verbs: [list]")}`);
    expect(() => loadRbacFiles([first, second])).toThrow(
      `${second}:2: Role "ns/r" is defined twice (first at ${first}:1)`,
    );
  });

  it("names the document when parsing objects that do not come from a file", () => {
    const documents = [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } },
      { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "" } },
    ];
    expect(() => parseRbacDocuments(documents)).toThrow(
      'document 2: ClusterRole "": metadata.name: Required value',
    );
  });
});
