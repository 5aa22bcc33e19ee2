// Reading one RBAC object (Role, ClusterRole, RoleBinding, ClusterRoleBinding) the way the API server
// would accept it: unknown fields are refused (kubectl validates strictly, and a typo such as
// `resourceName:` would otherwise silently widen a rule) and the rbac validation rules apply.
import { z } from "zod";

export const rbacApiVersion = "rbac.authorization.k8s.io/v1";
export const rbacKinds = ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"] as const;
export type RbacKind = (typeof rbacKinds)[number];

export interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}

export interface RoleDefinition {
  name: string;
  /** "" for a ClusterRole. */
  namespace: string;
  rules: PolicyRule[];
}

export interface Subject {
  kind: "User" | "Group" | "ServiceAccount";
  name: string;
  /** ServiceAccount only; "" means the binding's namespace. */
  namespace: string;
}

export interface BindingDefinition {
  name: string;
  /** "" for a ClusterRoleBinding. */
  namespace: string;
  roleRef: { kind: "Role" | "ClusterRole"; name: string };
  subjects: Subject[];
}

export type RbacObject =
  | { kind: "Role" | "ClusterRole"; role: RoleDefinition; aggregated: boolean }
  | { kind: "RoleBinding" | "ClusterRoleBinding"; binding: BindingDefinition };

/** A field the object got wrong: path as in the object (for finding its line), message as kubectl words it. */
export class ManifestProblem extends Error {
  constructor(
    readonly path: (string | number)[],
    problem: string,
    { namesField = true } = {},
  ) {
    super(namesField ? `${formatPath(path)}: ${problem}` : problem);
  }
}

const names = z
  .array(z.string())
  .nullish()
  .transform((list) => list ?? []);
const metadataSchema = z.looseObject({ name: z.string().min(1), namespace: z.string().optional() });
const ruleSchema = z.strictObject({
  verbs: names,
  apiGroups: names,
  resources: names,
  resourceNames: names,
  nonResourceURLs: names,
});
const roleSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: metadataSchema,
  rules: z
    .array(ruleSchema)
    .nullish()
    .transform((rules) => rules ?? []),
});
const clusterRoleSchema = roleSchema.extend({ aggregationRule: z.unknown().optional() });
const subjectSchema = z.strictObject({
  kind: z.string(),
  name: z.string().min(1),
  namespace: z.string().optional(),
  apiGroup: z.string().optional(),
});
const bindingSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: metadataSchema,
  roleRef: z.strictObject({ apiGroup: z.string(), kind: z.string(), name: z.string().min(1) }),
  subjects: z
    .array(subjectSchema)
    .nullish()
    .transform((subjects) => subjects ?? []),
});

const rbacGroup = "rbac.authorization.k8s.io";

/** Throws ManifestProblem. */
export function readRbacObject(kind: RbacKind, object: unknown): RbacObject {
  switch (kind) {
    case "Role":
    case "ClusterRole": {
      const namespaced = kind === "Role";
      const parsed = parseWith(namespaced ? roleSchema : clusterRoleSchema, object);
      const namespace = namespaced ? requireNamespace(parsed.metadata.namespace) : "";
      parsed.rules.forEach((rule, index) => checkRule(rule, namespaced, ["rules", index]));
      return {
        kind,
        role: { name: parsed.metadata.name, namespace, rules: parsed.rules },
        aggregated: "aggregationRule" in parsed && parsed.aggregationRule != null,
      };
    }
    case "RoleBinding":
    case "ClusterRoleBinding": {
      const namespaced = kind === "RoleBinding";
      const parsed = parseWith(bindingSchema, object);
      const namespace = namespaced ? requireNamespace(parsed.metadata.namespace) : "";
      const { roleRef } = parsed;
      if (roleRef.apiGroup !== rbacGroup) unsupported(["roleRef", "apiGroup"], roleRef.apiGroup, [rbacGroup]);
      const roleKinds = namespaced ? ["Role", "ClusterRole"] : ["ClusterRole"];
      if (!roleKinds.includes(roleRef.kind)) unsupported(["roleRef", "kind"], roleRef.kind, roleKinds);
      const subjects = parsed.subjects.map((subject, index) => readSubject(subject, namespaced, index));
      return {
        kind,
        binding: {
          name: parsed.metadata.name,
          namespace,
          roleRef: { kind: roleRef.kind as "Role" | "ClusterRole", name: roleRef.name },
          subjects,
        },
      };
    }
  }
}

function parseWith<T extends z.ZodType>(schema: T, object: unknown): z.output<T> {
  const result = schema.safeParse(object, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new ManifestProblem([], "Invalid value");
  const path = issue.path.filter((key) => typeof key !== "symbol");
  if (issue.code === "unrecognized_keys") {
    const field = [...path, issue.keys[0] ?? ""];
    throw new ManifestProblem(field, `unknown field ${JSON.stringify(formatPath(field))}`, {
      namesField: false,
    });
  }
  const missing = issue.input === undefined || issue.input === "";
  throw new ManifestProblem(path, missing ? "Required value" : `Invalid value: ${issue.message}`);
}

function requireNamespace(namespace: string | undefined): string {
  // kubectl would fill in the context's namespace; a policy file read on its own has no context.
  if (!namespace) throw new ManifestProblem(["metadata", "namespace"], "Required value");
  return namespace;
}

// pkg/apis/rbac/validation ValidatePolicyRule, same wording.
function checkRule(rule: PolicyRule, namespaced: boolean, path: (string | number)[]): void {
  if (rule.verbs.length === 0) {
    throw new ManifestProblem([...path, "verbs"], "Required value: verbs must contain at least one value");
  }
  if (rule.nonResourceURLs.length > 0) {
    const field = [...path, "nonResourceURLs"];
    if (namespaced) {
      throw new ManifestProblem(field, "Invalid value: namespaced rules cannot apply to non-resource URLs");
    }
    if (rule.apiGroups.length > 0 || rule.resources.length > 0) {
      throw new ManifestProblem(
        field,
        "Invalid value: rules cannot apply to both regular resources and non-resource URLs",
      );
    }
    return;
  }
  if (rule.apiGroups.length === 0) {
    throw new ManifestProblem(
      [...path, "apiGroups"],
      "Required value: resource rules must supply at least one api group",
    );
  }
  if (rule.resources.length === 0) {
    throw new ManifestProblem(
      [...path, "resources"],
      "Required value: resource rules must supply at least one resource",
    );
  }
}

function readSubject(subject: z.output<typeof subjectSchema>, namespaced: boolean, index: number): Subject {
  const path = ["subjects", index];
  const apiGroup = subject.apiGroup ?? "";
  switch (subject.kind) {
    case "ServiceAccount":
      if (apiGroup !== "") unsupported([...path, "apiGroup"], apiGroup, [""]);
      if (!namespaced && !subject.namespace)
        throw new ManifestProblem([...path, "namespace"], "Required value");
      return { kind: "ServiceAccount", name: subject.name, namespace: subject.namespace ?? "" };
    case "User":
    case "Group":
      // v1 defaults an empty apiGroup to rbac.authorization.k8s.io for these two kinds.
      if (apiGroup !== "" && apiGroup !== rbacGroup)
        unsupported([...path, "apiGroup"], apiGroup, [rbacGroup]);
      return { kind: subject.kind, name: subject.name, namespace: "" };
    default:
      return unsupported([...path, "kind"], subject.kind, ["ServiceAccount", "User", "Group"]);
  }
}

function unsupported(path: (string | number)[], value: string, supported: string[]): never {
  const list = supported.map((item) => JSON.stringify(item)).join(", ");
  throw new ManifestProblem(path, `Unsupported value: ${JSON.stringify(value)}: supported values: ${list}`);
}

function formatPath(path: (string | number)[]): string {
  return path
    .map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? key : `.${key}`))
    .join("");
}
