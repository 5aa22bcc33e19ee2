// Kubernetes RBAC for the emulator: policies read from the same YAML a cluster would get, evaluated
// the way the API server's RBAC authorizer does (plugin/pkg/auth/authorizer/rbac and
// pkg/registry/rbac/validation/rule.go), with the API server's 403 wording.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LineCounter, parseAllDocuments, type Document } from "yaml";
import type { Authorizer, Decision, RequestAttributes, UserInfo } from "./attributes.ts";
import { goQuote } from "./go-quote.ts";
import {
  ManifestProblem,
  rbacApiVersion,
  rbacKinds,
  readRbacObject,
  type BindingDefinition,
  type PolicyRule,
  type RbacKind,
  type RoleDefinition,
  type Subject,
} from "./manifests.ts";
import { serviceAccountUsername } from "./users.ts";

export interface RbacPolicy {
  roles: RoleDefinition[];
  clusterRoles: RoleDefinition[];
  roleBindings: BindingDefinition[];
  clusterRoleBindings: BindingDefinition[];
  /** What was read but is not evaluated as a cluster would (aggregated ClusterRoles). */
  notes: string[];
}

/**
 * The default RBAC every Kubernetes cluster with KubeVirt has and clients rely on: discovery,
 * SelfSubjectAccessReview for everyone (so `kubectl auth can-i` works), cluster-admin, kubevirt.io:default.
 */
export const clusterDefaultsFile = fileURLToPath(new URL("./cluster-defaults.yaml", import.meta.url));

/**
 * Reads Role/ClusterRole/RoleBinding/ClusterRoleBinding objects from multi-document YAML files, or every
 * .yaml/.yml file of a directory. Other kinds (Deployment, Kustomization...) are skipped, so a whole
 * kustomize base can be passed. A file that cannot be read or holds an invalid RBAC object throws an
 * Error naming the file, the line and the problem.
 */
export function loadRbacFiles(paths: string[]): RbacPolicy {
  const collector = new PolicyCollector();
  for (const file of paths.flatMap(listYamlFiles)) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new Error(`${file}: cannot read: ${(error as Error).message}`);
    }
    const lineCounter = new LineCounter();
    for (const document of parseAllDocuments(text, { lineCounter })) {
      const [yamlError] = document.errors;
      if (yamlError) throw new Error(`${file}: invalid YAML: ${yamlError.message}`);
      const lineOf = (where: (string | number)[]) => lineCounter.linePos(nodeOffset(document, where)).line;
      const contents = document.toJS() as unknown;
      try {
        collector.add(contents, (where) => `${file}:${lineOf(where)}`);
      } catch (error) {
        if (!(error instanceof ObjectProblem)) throw error;
        throw new Error(`${file}:${lineOf(error.path)}: ${error.message}`);
      }
    }
  }
  return collector.policy;
}

/** The same as loadRbacFiles for objects already parsed (for instance from `kubectl kustomize`). */
export function parseRbacDocuments(docs: unknown[]): RbacPolicy {
  const collector = new PolicyCollector();
  docs.forEach((doc, index) => {
    const source = `document ${index + 1}`;
    try {
      collector.add(doc, () => source);
    } catch (error) {
      if (!(error instanceof ObjectProblem)) throw error;
      throw new Error(`${source}: ${error.message}`);
    }
  });
  return collector.policy;
}

function listYamlFiles(entry: string): string[] {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(entry).isDirectory();
  } catch (error) {
    throw new Error(`${entry}: cannot read: ${(error as Error).message}`);
  }
  if (!isDirectory) return [entry];
  return readdirSync(entry)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((name) => path.join(entry, name));
}

function nodeOffset(document: Document, where: (string | number)[]): number {
  // A missing field has no node: point at the closest parent that exists.
  for (let length = where.length; length >= 0; length -= 1) {
    const node = document.getIn(where.slice(0, length), true) as
      { range?: [number, number, number] } | undefined;
    if (node?.range) return node.range[0];
  }
  return 0;
}

/** A problem in one object, with the path from the document's root (inside a List: items[i]...). */
class ObjectProblem extends Error {
  constructor(
    readonly path: (string | number)[],
    message: string,
  ) {
    super(message);
  }
}

class PolicyCollector {
  readonly policy: RbacPolicy = {
    roles: [],
    clusterRoles: [],
    roleBindings: [],
    clusterRoleBindings: [],
    notes: [],
  };
  private readonly seen = new Map<string, string>();

  add(
    object: unknown,
    sourceOf: (where: (string | number)[]) => string,
    where: (string | number)[] = [],
  ): void {
    if (!isRecord(object)) return;
    const { apiVersion, kind } = object;
    if (apiVersion === "v1" && kind === "List" && Array.isArray(object.items)) {
      object.items.forEach((item, index) => this.add(item, sourceOf, [...where, "items", index]));
      return;
    }
    if (typeof apiVersion !== "string" || !apiVersion.startsWith("rbac.authorization.k8s.io/")) return;
    if (!rbacKinds.includes(kind as RbacKind)) return;
    const label = describeObject(kind as RbacKind, object);
    if (apiVersion !== rbacApiVersion) {
      throw new ObjectProblem(
        [...where, "apiVersion"],
        `${label}: apiVersion ${apiVersion} is not served since Kubernetes 1.22 (use ${rbacApiVersion})`,
      );
    }
    let read;
    try {
      read = readRbacObject(kind as RbacKind, object);
    } catch (error) {
      if (!(error instanceof ManifestProblem)) throw error;
      throw new ObjectProblem([...where, ...error.path], `${label}: ${error.message}`);
    }
    const source = sourceOf(where);
    const earlier = this.seen.get(label);
    if (earlier !== undefined)
      throw new ObjectProblem(where, `${label} is defined twice (first at ${earlier})`);
    this.seen.set(label, source);
    switch (read.kind) {
      case "Role":
        this.policy.roles.push(read.role);
        break;
      case "ClusterRole":
        this.policy.clusterRoles.push(read.role);
        if (read.aggregated) {
          this.policy.notes.push(
            `${source}: ${label} has an aggregationRule: the emulator does not aggregate, only its own rules apply`,
          );
        }
        break;
      case "RoleBinding":
        this.policy.roleBindings.push(read.binding);
        break;
      case "ClusterRoleBinding":
        this.policy.clusterRoleBindings.push(read.binding);
        break;
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeObject(kind: RbacKind, object: Record<string, unknown>): string {
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const name = typeof metadata.name === "string" ? metadata.name : "";
  const namespace = typeof metadata.namespace === "string" ? metadata.namespace : "";
  const namespaced = kind === "Role" || kind === "RoleBinding";
  return `${kind} ${JSON.stringify(namespaced && namespace ? `${namespace}/${name}` : name)}`;
}

export interface RbacAuthorizerOptions {
  /** Usernames allowed everything (the emulator's admin token). */
  superUsers?: string[];
  /** Groups allowed everything; default system:masters, as in every cluster. */
  superGroups?: string[];
}

export function createRbacAuthorizer(policy: RbacPolicy, options: RbacAuthorizerOptions = {}): Authorizer {
  const superUsers = new Set(options.superUsers ?? []);
  const superGroups = new Set(options.superGroups ?? ["system:masters"]);
  const clusterRoles = new Map(policy.clusterRoles.map((role) => [role.name, role]));
  const roles = new Map(policy.roles.map((role) => [`${role.namespace}/${role.name}`, role]));

  function rulesOf(binding: BindingDefinition): PolicyRule[] | string {
    const { kind, name } = binding.roleRef;
    const role = kind === "Role" ? roles.get(`${binding.namespace}/${name}`) : clusterRoles.get(name);
    if (role) return role.rules;
    // The lister's NotFound error, as it shows up after "RBAC: " in a 403.
    return `${kind.toLowerCase()}.rbac.authorization.k8s.io ${goQuote(name)} not found`;
  }

  return {
    authorize(user: UserInfo, attributes: RequestAttributes): Decision {
      if (superUsers.has(user.username) || user.groups.some((group) => superGroups.has(group))) {
        return { allowed: true, reason: "" };
      }
      // Cluster-scoped and non-resource requests have no namespace: only ClusterRoleBindings apply.
      const namespace = attributes.kind === "resource" ? attributes.namespace : "";
      const bindings = [
        ...policy.clusterRoleBindings,
        ...(namespace === "" ? [] : policy.roleBindings.filter((binding) => binding.namespace === namespace)),
      ];
      const errors: string[] = [];
      for (const binding of bindings) {
        const subject = binding.subjects.find((candidate) => appliesTo(user, candidate, binding.namespace));
        if (!subject) continue;
        const rules = rulesOf(binding);
        if (typeof rules === "string") {
          if (!errors.includes(rules)) errors.push(rules);
          continue;
        }
        if (rules.some((rule) => ruleAllows(rule, attributes))) {
          return { allowed: true, reason: `RBAC: allowed by ${describeGrant(binding, subject)}` };
        }
      }
      // A plain denial has no reason (kubectl auth can-i prints just "no"); unresolvable roles do.
      const reason =
        errors.length === 0 ? "" : `RBAC: ${errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`}`;
      return { allowed: false, reason };
    },
  };
}

function appliesTo(user: UserInfo, subject: Subject, bindingNamespace: string): boolean {
  switch (subject.kind) {
    case "User":
      return user.username === subject.name;
    case "Group":
      return user.groups.includes(subject.name);
    case "ServiceAccount": {
      // A RoleBinding may leave out the namespace of a service account from its own namespace.
      const namespace = subject.namespace || bindingNamespace;
      return namespace !== "" && user.username === serviceAccountUsername(namespace, subject.name);
    }
  }
}

function ruleAllows(rule: PolicyRule, attributes: RequestAttributes): boolean {
  if (!matchesAny(rule.verbs, attributes.verb)) return false;
  if (attributes.kind === "nonResource") return nonResourceURLMatches(rule.nonResourceURLs, attributes.path);
  const { apiGroup, resource, subresource, name } = attributes;
  const combined = subresource === "" ? resource : `${resource}/${subresource}`;
  return (
    matchesAny(rule.apiGroups, apiGroup) &&
    rule.resources.some(
      (ruleResource) =>
        ruleResource === "*" ||
        ruleResource === combined ||
        (subresource !== "" && ruleResource === `*/${subresource}`),
    ) &&
    // A request without a name (list, watch, create, deletecollection) never matches resourceNames.
    (rule.resourceNames.length === 0 || rule.resourceNames.includes(name))
  );
}

function matchesAny(ruleValues: string[], requested: string): boolean {
  return ruleValues.some((value) => value === "*" || value === requested);
}

function nonResourceURLMatches(ruleURLs: string[], requestedPath: string): boolean {
  return ruleURLs.some(
    (url) =>
      url === "*" ||
      url === requestedPath ||
      (url.endsWith("*") && requestedPath.startsWith(url.replace(/\*+$/, ""))),
  );
}

function describeGrant(binding: BindingDefinition, subject: Subject): string {
  const role = `${binding.roleRef.kind} ${goQuote(binding.roleRef.name)}`;
  const who =
    subject.kind === "ServiceAccount"
      ? `${subject.kind} ${goQuote(`${subject.name}/${subject.namespace || binding.namespace}`)}`
      : `${subject.kind} ${goQuote(subject.name)}`;
  return binding.namespace === ""
    ? `ClusterRoleBinding ${goQuote(binding.name)} of ${role} to ${who}`
    : `RoleBinding ${goQuote(`${binding.name}/${binding.namespace}`)} of ${role} to ${who}`;
}

// The API server escapes these so an error never reads as HTML (responsewriters.sanitizer).
function sanitize(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * The message of the API server's 403 for a denied request, byte for byte: responsewriters.Forbidden
 * wrapped by apierrors.NewForbidden. Pass the Decision's reason (it is appended when not empty).
 */
export function forbiddenMessage(user: UserInfo, attrs: RequestAttributes, reason = ""): string {
  const cause = `${sanitize(describeDenial(user, attrs))}${reason === "" ? "" : `: ${reason}`}`;
  const groupResource = qualifiedResource(attrs);
  if (groupResource === "") return `forbidden: ${cause}`;
  const name = attrs.kind === "resource" ? attrs.name : "";
  return name === ""
    ? `${groupResource} is forbidden: ${cause}`
    : `${groupResource} ${goQuote(name)} is forbidden: ${cause}`;
}

/** The whole metav1.Status body of that 403, fields in the API server's order. */
export function forbiddenStatus(
  user: UserInfo,
  attrs: RequestAttributes,
  reason = "",
): Record<string, unknown> {
  const details: Record<string, string> = {};
  if (attrs.kind === "resource") {
    if (attrs.name !== "") details.name = attrs.name;
    if (attrs.apiGroup !== "") details.group = attrs.apiGroup;
    if (attrs.resource !== "") details.kind = attrs.resource;
  }
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: forbiddenMessage(user, attrs, reason),
    reason: "Forbidden",
    details,
    code: 403,
  };
}

function describeDenial(user: UserInfo, attrs: RequestAttributes): string {
  const who = `User ${goQuote(user.username)} cannot ${attrs.verb}`;
  if (attrs.kind === "nonResource") return `${who} path ${goQuote(attrs.path)}`;
  const resource = attrs.subresource === "" ? attrs.resource : `${attrs.resource}/${attrs.subresource}`;
  const what = `${who} resource ${goQuote(resource)} in API group ${goQuote(attrs.apiGroup)}`;
  return attrs.namespace === ""
    ? `${what} at the cluster scope`
    : `${what} in the namespace ${goQuote(attrs.namespace)}`;
}

// schema.GroupResource.String(): "resource.group", just "resource" for the core group; the
// subresource is not part of it.
function qualifiedResource(attrs: RequestAttributes): string {
  if (attrs.kind === "nonResource") return "";
  return attrs.apiGroup === "" ? attrs.resource : `${attrs.resource}.${attrs.apiGroup}`;
}
