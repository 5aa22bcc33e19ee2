// Structural validation of client writes against the OpenAPI schema, as the API server does for
// custom resources: wrong types are 422 with one cause per field, nulls in non-nullable fields are
// dropped, unknown fields are pruned and reported (so the caller can warn or, with
// fieldValidation=Strict, refuse). Written as one walk rather than with ajv because the walk has
// to rewrite the object (pruning) and name every field the way Kubernetes does.
import { readFileSync } from "node:fs";
import { isJsonObject, type JsonObject } from "../../cluster/objects.ts";
import type { StatusCause } from "../../http/status.ts";
import { coreDefinitions } from "./core-definitions.ts";
import type { SchemaNode } from "./schema-node.ts";

interface Swagger {
  definitions: Record<string, SchemaNode>;
}

const swagger = JSON.parse(
  readFileSync(new URL("./kubevirt-swagger.json", import.meta.url), "utf8"),
) as Swagger;

/** KubeVirt's definitions plus the core kinds, keyed by definition name. */
export const definitions: Record<string, SchemaNode> = { ...swagger.definitions, ...coreDefinitions };

const refPrefix = "#/definitions/";
const objectMetaRef = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta";
// Kinds whose content is free-form in the API server's eyes.
const freeFormRefs = new Set([
  "k8s.io.apimachinery.pkg.runtime.RawExtension",
  "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1",
]);
// Serialized as a string, but the API server also takes a number (CRDs mark them int-or-string).
const intOrStringRefs = new Set([
  "k8s.io.apimachinery.pkg.api.resource.Quantity",
  "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
]);

export interface SchemaResult {
  value: JsonObject;
  /** Paths of pruned fields, e.g. `spec.template.spec.foo`. */
  unknownFields: string[];
  causes: StatusCause[];
}

const dropped = Symbol("dropped");

function jsonTypeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function childPath(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

class Walker {
  readonly unknownFields: string[] = [];
  readonly causes: StatusCause[] = [];

  typeError(path: string, value: unknown, expected: string): typeof dropped {
    const actual = jsonTypeName(value);
    this.causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: "${actual}": ${path} in body must be of type ${expected}: "${actual}"`,
      field: path,
    });
    return dropped;
  }

  walk(value: unknown, schema: SchemaNode, path: string): unknown {
    if (schema.$ref) {
      const name = schema.$ref.slice(refPrefix.length);
      if (freeFormRefs.has(name)) return value;
      if (intOrStringRefs.has(name)) {
        if (value === null) return dropped;
        if (typeof value === "string" || typeof value === "number") return value;
        return this.typeError(path, value, "integer,string");
      }
      // Embedded ObjectMeta (a template's metadata) is kept as given, as CRD schemas do.
      if (name === objectMetaRef && path.includes(".")) {
        if (value === null) return value;
        return isJsonObject(value) ? value : this.typeError(path, value, "object");
      }
      const target = definitions[name];
      if (!target) return value;
      return this.walk(value, { ...target, nullable: schema.nullable ?? target.nullable }, path);
    }
    if (value === null) return schema.nullable ? null : dropped;
    switch (schema.type) {
      case "object":
        return this.walkObject(value, schema, path);
      case "array": {
        if (!Array.isArray(value)) return this.typeError(path, value, "array");
        const items = schema.items;
        if (!items) return value;
        return value
          .map((item, index) => this.walk(item, items, `${path}[${index}]`))
          .filter((item) => item !== dropped);
      }
      case "string":
        return typeof value === "string" ? value : this.typeError(path, value, "string");
      case "integer":
        return typeof value === "number" && Number.isInteger(value)
          ? value
          : this.typeError(path, value, "integer");
      case "number":
        return typeof value === "number" ? value : this.typeError(path, value, "number");
      case "boolean":
        return typeof value === "boolean" ? value : this.typeError(path, value, "boolean");
      default:
        return value;
    }
  }

  walkObject(value: unknown, schema: SchemaNode, path: string): unknown {
    if (!isJsonObject(value)) return this.typeError(path, value, "object");
    if (schema["x-kubernetes-preserve-unknown-fields"]) return value;
    const result: JsonObject = {};
    for (const [key, child] of Object.entries(value)) {
      const property = schema.properties?.[key];
      const additional =
        typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
      const childSchema = property ?? additional;
      if (!childSchema) {
        this.unknownFields.push(childPath(path, key));
        continue;
      }
      const walked = this.walk(child, childSchema, property ? childPath(path, key) : `${path}[${key}]`);
      if (walked !== dropped) result[key] = walked;
    }
    for (const key of schema.required ?? []) {
      if (!(key in result)) {
        this.causes.push({
          reason: "FieldValueRequired",
          message: "Required value",
          field: childPath(path, key),
        });
      }
    }
    return result;
  }
}

/** Checks and prunes a whole object against a named definition. */
export function checkAgainstSchema(object: JsonObject, definition: string): SchemaResult {
  const schema = definitions[definition];
  if (!schema) return { value: object, unknownFields: [], causes: [] };
  const walker = new Walker();
  const walked = walker.walkObject(object, schema, "");
  return {
    value: isJsonObject(walked) ? walked : object,
    unknownFields: walker.unknownFields,
    causes: walker.causes,
  };
}
