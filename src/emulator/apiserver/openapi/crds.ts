// KubeVirt's kinds as CustomResourceDefinitions for a real kube-apiserver (cluster/real-apiserver,
// `npm run cluster:real`), built from the same Swagger document and resource table the emulator
// serves, so that both servers validate and prune the same fields.
//
// A CRD's schema must be structural: no $ref, a type on every node, metadata at the root only as
// `type: object`. So every $ref is inlined, and the few apimachinery types that are not plain JSON
// objects get the forms KubeVirt's own CRDs give them (virt-operator's validations_generated.go):
// Quantity and IntOrString as int-or-string, Time as a nullable date-time string, an embedded
// ObjectMeta (a template's metadata) as a nullable object kept as given.
//
// WARNING: this is KubeVirt's Swagger, not KubeVirt's CRDs. KubeVirt generates its CRD schemas from
// its Go types with controller-gen, which differs in small ways this file cannot see: a handful of
// kubebuilder enums, defaults (e.g. status.printableStatus: Stopped, a LocalObjectReference's name: "")
// and CEL rules exist there and not here; the Swagger's defaults (openapi-gen's zero values for
// required fields) and `+enum` lists are left out here because KubeVirt's CRDs do not carry them.
// Only v1 is served; KubeVirt also serves the deprecated v1alpha3 with the same schema.
import {
  kubeVirts,
  virtualMachineInstances,
  virtualMachines,
  type ResourceType,
} from "../../cluster/resources.ts";
import { definitions } from "./schema.ts";
import type { SchemaNode } from "./schema-node.ts";

/** apiextensions.k8s.io/v1 JSONSchemaProps, as far as these CRDs use it. */
export interface CrdSchema {
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  format?: string;
  description?: string;
  properties?: Record<string, CrdSchema>;
  additionalProperties?: CrdSchema;
  items?: CrdSchema;
  required?: string[];
  nullable?: boolean;
  anyOf?: CrdSchema[];
  pattern?: string;
  "x-kubernetes-int-or-string"?: true;
  "x-kubernetes-preserve-unknown-fields"?: true;
  "x-kubernetes-list-type"?: string;
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: string;
}

export interface PrinterColumn {
  name: string;
  type: "string" | "date";
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: {
      plural: string;
      singular: string;
      kind: string;
      listKind: string;
      shortNames: string[];
      categories: string[];
    };
    scope: "Namespaced" | "Cluster";
    versions: {
      name: string;
      served: true;
      storage: true;
      schema: { openAPIV3Schema: CrdSchema };
      subresources?: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
    }[];
  };
}

const refPrefix = "#/definitions/";
const meta = "k8s.io.apimachinery.pkg.apis.meta.v1.";

// Quantity's syntax, as apimachinery's CRD generators write it.
const quantityPattern =
  "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

/** The apimachinery types that are not what their Swagger definition says on the wire. */
function specialForm(name: string): CrdSchema | undefined {
  switch (name) {
    case `${meta}ObjectMeta`:
      // An embedded template's metadata, which KubeVirt's CRDs keep as given. (The object's own
      // metadata is set apart in structuralSchema.)
      return { type: "object", nullable: true, "x-kubernetes-preserve-unknown-fields": true };
    case `${meta}Time`:
      return { type: "string", format: "date-time", nullable: true };
    case "k8s.io.apimachinery.pkg.api.resource.Quantity":
      return {
        anyOf: [{ type: "integer" }, { type: "string" }],
        pattern: quantityPattern,
        "x-kubernetes-int-or-string": true,
      };
    case "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
      return { anyOf: [{ type: "integer" }, { type: "string" }], "x-kubernetes-int-or-string": true };
    case "k8s.io.apimachinery.pkg.runtime.RawExtension":
    case `${meta}FieldsV1`:
      return { type: "object", "x-kubernetes-preserve-unknown-fields": true };
    default:
      return undefined;
  }
}

const jsonTypes = new Set(["object", "array", "string", "integer", "number", "boolean"]);

class Converter {
  constructor(private readonly defs: Record<string, SchemaNode>) {}

  /** `path` is the chain of definitions being inlined, to name a cycle if the Swagger ever has one. */
  convert(node: SchemaNode, path: string[]): CrdSchema {
    if (node.$ref !== undefined) {
      const name = node.$ref.startsWith(refPrefix) ? node.$ref.slice(refPrefix.length) : node.$ref;
      // A description next to a $ref describes the field, which is more specific than the type's own.
      const fieldDescription = node.description;
      const special = specialForm(name);
      const converted = special ?? this.definition(name, path);
      return fieldDescription === undefined ? converted : { ...converted, description: fieldDescription };
    }
    const out: CrdSchema = {};
    if (node.description !== undefined) out.description = node.description;
    // KubeVirt's Swagger writes two unions as lists of types, which a structural schema cannot.
    if (Array.isArray(node.type)) {
      const types = node.type;
      const others = types.filter((t) => t !== "null");
      if (types.includes("string") && others.some((t) => t === "number" || t === "integer")) {
        // A port by number or name: int-or-string, as IntOrString is.
        return {
          ...out,
          anyOf: [{ type: "integer" }, { type: "string" }],
          "x-kubernetes-int-or-string": true,
        };
      }
      if (others.length === 1 && others[0] === "string" && types.includes("null")) {
        // Only conditions' timestamps (metav1.Time) are written so: give them Time's form.
        return { ...out, ...specialForm(`${meta}Time`) };
      }
      throw new Error(`cannot express types ${types.join(", ")} at ${path.join(" > ")}`);
    }
    const type = node.type ?? (node.properties !== undefined ? "object" : undefined);
    if (type === undefined || !jsonTypes.has(type)) {
      throw new Error(`no JSON type at ${path.join(" > ")}: ${JSON.stringify(node).slice(0, 200)}`);
    }
    out.type = type as CrdSchema["type"];
    if (node.format !== undefined) out.format = node.format;
    if (node.nullable === true) out.nullable = true;
    if (node.properties !== undefined) {
      out.properties = {};
      for (const [key, child] of Object.entries(node.properties)) {
        out.properties[key] = this.convert(child, [...path, key]);
      }
    }
    if (typeof node.additionalProperties === "object") {
      out.additionalProperties = this.convert(node.additionalProperties, [...path, "*"]);
    }
    if (node.items !== undefined) out.items = this.convert(node.items, [...path, "[]"]);
    if (node.required !== undefined && node.required.length > 0) out.required = [...node.required];
    for (const key of ["x-kubernetes-list-type", "x-kubernetes-map-type"] as const) {
      const value = node[key];
      if (typeof value === "string") out[key] = value;
    }
    const mapKeys = node["x-kubernetes-list-map-keys"];
    if (Array.isArray(mapKeys)) out["x-kubernetes-list-map-keys"] = mapKeys.map(String);
    if (node["x-kubernetes-preserve-unknown-fields"] === true)
      out["x-kubernetes-preserve-unknown-fields"] = true;
    return out;
  }

  private definition(name: string, path: string[]): CrdSchema {
    if (path.includes(name)) throw new Error(`recursive schema: ${[...path, name].join(" > ")}`);
    const node = this.defs[name];
    if (node === undefined) throw new Error(`no definition ${name} (from ${path.join(" > ")})`);
    return this.convert(node, [...path, name]);
  }
}

/** The structural schema of a definition, its $refs inlined. */
export function structuralSchema(
  definition: string,
  defs: Record<string, SchemaNode> = definitions,
): CrdSchema {
  const schema = new Converter(defs).convert({ $ref: `${refPrefix}${definition}` }, []);
  // The API server owns the object's own metadata: a CRD may say no more of it than this.
  if (schema.properties?.metadata !== undefined) schema.properties.metadata = { type: "object" };
  return schema;
}

// What `kubectl get` shows, as in KubeVirt's CRDs (virt-operator's crds.go), which the emulator's
// tables (apiserver/table.ts) also follow.
const age: PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };
const condition = (type: string): string => `.status.conditions[?(@.type=='${type}')].status`;
const printerColumns: Record<string, PrinterColumn[]> = {
  [virtualMachines.id]: [
    age,
    {
      name: "Status",
      type: "string",
      jsonPath: ".status.printableStatus",
      description: "Human Readable Status",
    },
    { name: "Ready", type: "string", jsonPath: condition("Ready") },
  ],
  [virtualMachineInstances.id]: [
    age,
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "IP", type: "string", jsonPath: ".status.interfaces[0].ipAddress" },
    { name: "NodeName", type: "string", jsonPath: ".status.nodeName" },
    { name: "Ready", type: "string", jsonPath: condition("Ready") },
    { name: "Live-Migratable", type: "string", jsonPath: condition("LiveMigratable"), priority: 1 },
    { name: "Paused", type: "string", jsonPath: condition("Paused"), priority: 1 },
  ],
  [kubeVirts.id]: [age, { name: "Phase", type: "string", jsonPath: ".status.phase" }],
};

/** The kinds the product reads or writes in kubevirt.io: the BFF's VMs and VMIs, the doctor's KubeVirt. */
export const kubevirtKinds: readonly ResourceType[] = [virtualMachines, virtualMachineInstances, kubeVirts];

export function customResourceDefinition(
  type: ResourceType,
  defs: Record<string, SchemaNode> = definitions,
): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${type.plural}.${type.group}`,
      labels: { "app.kubernetes.io/managed-by": "lab-console-cluster-real" },
    },
    spec: {
      group: type.group,
      names: {
        plural: type.plural,
        singular: type.singular,
        kind: type.kind,
        listKind: `${type.kind}List`,
        shortNames: [...type.shortNames],
        categories: [...type.categories],
      },
      scope: type.namespaced ? "Namespaced" : "Cluster",
      versions: [
        {
          name: type.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: structuralSchema(type.schema, defs) },
          ...(type.hasStatusSubresource ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: printerColumns[type.id] ?? [age],
        },
      ],
    },
  };
}

export function kubevirtCustomResourceDefinitions(): CustomResourceDefinition[] {
  return kubevirtKinds.map((type) => customResourceDefinition(type));
}
