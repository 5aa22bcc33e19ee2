// What every write body passes before the registry stores it, for create, update and patch alike:
// its kind, apiVersion, namespace and name held against the request's, the schema check (unknown
// fields refused, warned about or ignored as fieldValidation says), then admission. The warnings it
// collects go back to the client as Warning headers.
import type { ObjectMeta, JsonObject } from "../cluster/objects.ts";
import { isJsonObject } from "../cluster/objects.ts";
import { apiVersionOf, type ResourceType } from "../cluster/resources.ts";
import { badRequest, invalid } from "../http/status.ts";
import { admit, type Operation } from "./admission/admission.ts";
import { checkAgainstSchema } from "./openapi/schema.ts";
import type { FieldValidation } from "./query-parameters.ts";

export interface Prepared {
  object: JsonObject;
  warnings: string[];
}

/** Shape checks every write body goes through before admission. */
export function prepareWrite(
  resource: ResourceType,
  body: unknown,
  target: { namespace: string; name?: string },
  validation: FieldValidation,
  operation: Operation,
): Prepared {
  if (!isJsonObject(body))
    throw badRequest(
      `the request body must be a JSON object, not ${Array.isArray(body) ? "an array" : typeof body}`,
    );
  const expectedVersion = apiVersionOf(resource);
  if (typeof body.kind !== "string" || body.kind === "") {
    throw badRequest(`Object 'Kind' is missing in '${JSON.stringify(body).slice(0, 200)}'`);
  }
  if (typeof body.apiVersion !== "string" || body.apiVersion === "") {
    throw badRequest(`Object 'apiVersion' is missing in '${JSON.stringify(body).slice(0, 200)}'`);
  }
  if (body.apiVersion !== expectedVersion) {
    throw badRequest(
      `the API version in the data (${body.apiVersion}) does not match the expected API version (${expectedVersion})`,
    );
  }
  if (body.kind !== resource.kind) {
    throw badRequest(
      `the kind in the data (${body.kind}) does not match the expected kind (${resource.kind})`,
    );
  }
  const metadata = isJsonObject(body.metadata) ? (body.metadata as Partial<ObjectMeta>) : {};
  if (resource.namespaced) {
    if (metadata.namespace && metadata.namespace !== target.namespace) {
      throw badRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    }
  }
  if (target.name !== undefined && metadata.name !== undefined && metadata.name !== target.name) {
    throw badRequest(
      `the name of the object (${metadata.name}) does not match the name on the URL (${target.name})`,
    );
  }

  const checked = checkAgainstSchema(body, resource.schema);
  const name = String(metadata.name ?? target.name ?? "");
  if (checked.causes.length > 0)
    throw invalid({ kind: resource.kind, group: resource.group }, name, checked.causes);
  if (checked.unknownFields.length > 0 && validation === "Strict") {
    const fields = checked.unknownFields.map((path) => `unknown field "${path}"`).join(", ");
    throw badRequest(
      `${resource.kind} in version "${resource.version}" cannot be handled as a ${resource.kind}: strict decoding error: ${fields}`,
    );
  }
  const warnings =
    validation === "Warn" ? checked.unknownFields.map((path) => `unknown field "${path}"`) : [];

  const object = checked.value;
  const objectMetadata = (isJsonObject(object.metadata) ? { ...object.metadata } : {}) as Partial<ObjectMeta>;
  if (resource.namespaced) objectMetadata.namespace = target.namespace;
  else delete objectMetadata.namespace;
  if (target.name !== undefined) objectMetadata.name = target.name;
  const admitted = admit(resource, { ...object, metadata: objectMetadata }, operation);
  return { object: admitted.object, warnings: [...warnings, ...admitted.warnings] };
}

export function warningHeaders(warnings: string[]): Record<string, string[]> {
  return warnings.length === 0
    ? {}
    : { Warning: warnings.map((warning) => `299 - ${JSON.stringify(warning)}`) };
}
