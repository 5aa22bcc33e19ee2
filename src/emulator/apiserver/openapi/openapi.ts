// apiserver/openapi/: the schemas the emulator serves and checks writes against: KubeVirt's Swagger
// definitions as KubeVirt publishes them (kubevirt-swagger.json, which schema.ts reads), the core
// kinds' definitions (core-definitions.ts), the checks of client writes against both (schema.ts), and
// the OpenAPI documents built from both (this file).
//
// OpenAPI v3 documents per group/version, built from KubeVirt's Swagger definitions and the core
// kinds. kubectl needs them: apply and create check that PATCH takes fieldValidation (then validate
// server-side), choose the patch type from the PATCH request body types (merge patch for KubeVirt
// kinds, as for any CRD), and `kubectl explain` reads the schemas.
import { createHash } from "node:crypto";
import { isCustomResource, resourceTypes, type ResourceType } from "../../cluster/resources.ts";
import { definitions } from "./schema.ts";
import type { SchemaNode } from "./schema-node.ts";

const definitionPrefix = "#/definitions/";
const componentPrefix = "#/components/schemas/";
const patchDefinition = "k8s.io.apimachinery.pkg.apis.meta.v1.Patch";
const statusDefinition = "k8s.io.apimachinery.pkg.apis.meta.v1.Status";
const deleteOptionsDefinition = "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions";

interface GroupVersion {
  group: string;
  version: string;
}

/** The discovery key kubectl uses: `api/v1`, `apis/kubevirt.io/v1`. */
export function groupVersionPath({ group, version }: GroupVersion): string {
  return group === "" ? `api/${version}` : `apis/${group}/${version}`;
}

function collectReferences(name: string, seen: Set<string>): void {
  if (seen.has(name) || !definitions[name]) return;
  seen.add(name);
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (typeof node === "object" && node !== null) {
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string")
          collectReferences(value.slice(definitionPrefix.length), seen);
        else visit(value);
      }
    }
  };
  visit(definitions[name]);
}

// OpenAPI 3.0 ignores siblings of $ref, so the API server wraps references in allOf; so do we.
function toV3Schema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toV3Schema);
  if (typeof node !== "object" || node === null) return node;
  const result: Record<string, unknown> = {};
  let reference: string | undefined;
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && typeof value === "string")
      reference = componentPrefix + value.slice(definitionPrefix.length);
    else
      result[key] =
        key === "properties" || key === "definitions" ? mapValues(value, toV3Schema) : toV3Schema(value);
  }
  if (reference === undefined) return result;
  if (Object.keys(result).length === 0) return { $ref: reference };
  return { ...result, allOf: [{ $ref: reference }] };
}

function mapValues(value: unknown, map: (item: unknown) => unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, map(item)]));
}

function ref(definition: string): SchemaNode {
  return { $ref: componentPrefix + definition };
}

function jsonContent(definition: string): Record<string, unknown> {
  return { "application/json": { schema: ref(definition) } };
}

function queryParameter(name: string, description: string): Record<string, unknown> {
  return { name, in: "query", description, schema: { type: "string", uniqueItems: true } };
}

const writeParameters = [
  queryParameter("dryRun", "When present, indicates that modifications should not be persisted."),
  queryParameter(
    "fieldManager",
    "fieldManager is a name associated with the actor or entity that is making these changes.",
  ),
  queryParameter(
    "fieldValidation",
    "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields: Ignore, Warn or Strict.",
  ),
];

const listParameters = [
  queryParameter("labelSelector", "A selector to restrict the list of returned objects by their labels."),
  queryParameter("fieldSelector", "A selector to restrict the list of returned objects by their fields."),
  queryParameter(
    "resourceVersion",
    "resourceVersion sets a constraint on what resource versions a request may be served from.",
  ),
  queryParameter(
    "watch",
    "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.",
  ),
  queryParameter("allowWatchBookmarks", 'allowWatchBookmarks requests watch events with type "BOOKMARK".'),
  queryParameter("timeoutSeconds", "Timeout for the list/watch call."),
  queryParameter("limit", "limit is a maximum number of responses to return for a list call."),
  queryParameter(
    "continue",
    "The continue option should be set when retrieving more results from the server.",
  ),
];

function operation(
  resource: ResourceType,
  action: string,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  return {
    description: `${action} ${resource.kind}`,
    ...extra,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": {
      group: resource.group,
      version: resource.version,
      kind: resource.kind,
    },
  };
}

function patchTypes(resource: ResourceType): string[] {
  const types = ["application/json-patch+json", "application/merge-patch+json"];
  // Only built-in kinds take strategic merge patch, as on a real API server.
  return isCustomResource(resource) ? types : [...types, "application/strategic-merge-patch+json"];
}

function pathsFor(resource: ResourceType): Record<string, unknown> {
  const prefix = `/${groupVersionPath(resource)}`;
  const collection = resource.namespaced
    ? `${prefix}/namespaces/{namespace}/${resource.plural}`
    : `${prefix}/${resource.plural}`;
  const pathParameters = [
    ...(resource.namespaced
      ? [
          {
            name: "namespace",
            in: "path",
            required: true,
            description: "object name and auth scope",
            schema: { type: "string" },
          },
        ]
      : []),
  ];
  const nameParameter = {
    name: "name",
    in: "path",
    required: true,
    description: `name of the ${resource.kind}`,
    schema: { type: "string" },
  };
  const body = { content: jsonContent(resource.schema), required: true };
  const okObject = { "200": { description: "OK", content: jsonContent(resource.schema) } };
  const verbs = new Set(resource.verbs);
  const paths: Record<string, unknown> = {};

  const collectionOps: Record<string, unknown> = { parameters: pathParameters };
  if (verbs.has("list"))
    collectionOps.get = operation(resource, "list", { parameters: listParameters, responses: okObject });
  if (verbs.has("create")) {
    collectionOps.post = operation(resource, "post", {
      parameters: writeParameters,
      requestBody: body,
      responses: { ...okObject, "201": { description: "Created", content: jsonContent(resource.schema) } },
    });
  }
  paths[collection] = collectionOps;
  if (resource.namespaced && verbs.has("list")) {
    paths[`${prefix}/${resource.plural}`] = {
      get: operation(resource, "list", { parameters: listParameters, responses: okObject }),
    };
  }

  const itemOps: Record<string, unknown> = { parameters: [nameParameter, ...pathParameters] };
  if (verbs.has("get")) itemOps.get = operation(resource, "get", { responses: okObject });
  if (verbs.has("update"))
    itemOps.put = operation(resource, "put", {
      parameters: writeParameters,
      requestBody: body,
      responses: okObject,
    });
  if (verbs.has("patch")) {
    itemOps.patch = operation(resource, "patch", {
      parameters: writeParameters,
      requestBody: {
        content: Object.fromEntries(
          patchTypes(resource).map((type) => [type, { schema: ref(patchDefinition) }]),
        ),
        required: true,
      },
      responses: okObject,
    });
  }
  if (verbs.has("delete")) {
    itemOps.delete = operation(resource, "delete", {
      requestBody: { content: jsonContent(deleteOptionsDefinition) },
      responses: okObject,
    });
  }
  paths[`${collection}/{name}`] = itemOps;

  if (resource.hasStatusSubresource && verbs.has("update")) {
    paths[`${collection}/{name}/status`] = {
      parameters: [nameParameter, ...pathParameters],
      get: operation(resource, "get", { responses: okObject }),
      put: operation(resource, "put", {
        parameters: writeParameters,
        requestBody: body,
        responses: okObject,
      }),
    };
  }
  return paths;
}

function buildDocument(groupVersion: GroupVersion, kubernetesVersion: string): Record<string, unknown> {
  const kinds = resourceTypes.filter(
    (type) => type.group === groupVersion.group && type.version === groupVersion.version,
  );
  const names = new Set<string>();
  for (const name of [
    ...kinds.map((kind) => kind.schema),
    patchDefinition,
    statusDefinition,
    deleteOptionsDefinition,
  ]) {
    collectReferences(name, names);
  }
  const schemas: Record<string, unknown> = {};
  for (const name of [...names].sort()) {
    schemas[name] = toV3Schema(definitions[name]);
  }
  for (const kind of kinds) {
    const schema = schemas[kind.schema] as Record<string, unknown>;
    schemas[kind.schema] = {
      ...schema,
      "x-kubernetes-group-version-kind": [{ group: kind.group, version: kind.version, kind: kind.kind }],
    };
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: kubernetesVersion },
    paths: Object.assign({}, ...kinds.map(pathsFor)),
    components: { schemas },
  };
}

export interface OpenApiDocuments {
  /** The /openapi/v3 index. */
  index(): Record<string, unknown>;
  /** The serialized document for a path like `apis/kubevirt.io/v1`, or undefined. */
  document(path: string): string | undefined;
}

export function createOpenApiDocuments(kubernetesVersion: string): OpenApiDocuments {
  const groupVersions = new Map<string, GroupVersion>();
  for (const type of resourceTypes) groupVersions.set(groupVersionPath(type), type);
  const cache = new Map<string, { body: string; hash: string }>();

  const built = (path: string): { body: string; hash: string } | undefined => {
    const groupVersion = groupVersions.get(path);
    if (!groupVersion) return undefined;
    let entry = cache.get(path);
    if (!entry) {
      const body = JSON.stringify(buildDocument(groupVersion, kubernetesVersion));
      entry = { body, hash: createHash("sha512").update(body).digest("hex").toUpperCase() };
      cache.set(path, entry);
    }
    return entry;
  };

  return {
    index: () => ({
      paths: Object.fromEntries(
        [...groupVersions.keys()].map((path) => [
          path,
          { serverRelativeURL: `/openapi/v3/${path}?hash=${built(path)?.hash ?? ""}` },
        ]),
      ),
    }),
    document: (path) => built(path)?.body,
  };
}
