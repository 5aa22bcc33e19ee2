// apiserver/admission/: what happens to a write between its schema check and the store, as the API
// server's admission plugins and KubeVirt's webhooks do it: defaults, the VMI mutator
// (vmi-mutator.ts) and validation, with one module per core kind or plugin whose rules are long
// (Leases, NetworkPolicies, owner references). rest.ts runs them on every write.
//
// Admission after schema checks: the API server's metadata validation (names, labels), its defaults
// and checks for core kinds (NetworkPolicies: network-policy-admission.ts), and KubeVirt's validating
// webhooks for VirtualMachines, VirtualMachineInstances and the KubeVirt CR, with their messages and
// the deprecation warning for spec.running.
import { parseQuantity } from "../../../common/quantity.ts";
import { field, isJsonObject, type JsonObject, type ObjectMeta } from "../../cluster/objects.ts";
import {
  kubeVirts,
  leases,
  namespaces,
  networkPolicies,
  secrets,
  virtualMachineInstances,
  virtualMachines,
  type ResourceType,
} from "../../cluster/resources.ts";
import { ApiError, badRequest, invalid, type StatusCause } from "../../http/status.ts";
import { admitLease } from "./lease-admission.ts";
import { admitNetworkPolicy } from "./network-policy-admission.ts";
import { mutateNewVmi } from "./vmi-mutator.ts";

export interface Admitted {
  object: JsonObject;
  warnings: string[];
}

const dns1123LabelPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123SubdomainPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const labelValuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const qualifiedNamePattern = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

const dns1123LabelMessage =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const dns1123SubdomainMessage =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const labelValueMessage =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

function invalidValue(fieldPath: string, value: string, detail: string): StatusCause {
  return { reason: "FieldValueInvalid", message: `Invalid value: "${value}": ${detail}`, field: fieldPath };
}

function checkName(resource: ResourceType, name: string, fieldPath: string): StatusCause[] {
  // Namespaces are DNS labels (they end up in DNS names); most other kinds are DNS subdomains.
  const isLabel = resource === namespaces;
  const max = isLabel ? 63 : 253;
  const causes: StatusCause[] = [];
  if (name.length > max) {
    causes.push(invalidValue(fieldPath, name.slice(0, max), `must be no more than ${max} characters`));
    return causes;
  }
  const pattern = isLabel ? dns1123LabelPattern : dns1123SubdomainPattern;
  if (!pattern.test(name)) {
    causes.push(invalidValue(fieldPath, name, isLabel ? dns1123LabelMessage : dns1123SubdomainMessage));
  }
  return causes;
}

function checkQualifiedKey(key: string, fieldPath: string): StatusCause[] {
  const slash = key.lastIndexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : "";
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const causes: StatusCause[] = [];
  if (slash >= 0 && (prefix.length > 253 || !dns1123SubdomainPattern.test(prefix))) {
    causes.push(invalidValue(fieldPath, key, `prefix part ${dns1123SubdomainMessage}`));
  }
  if (name.length > 63 || !qualifiedNamePattern.test(name)) {
    causes.push(
      invalidValue(
        fieldPath,
        key,
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ),
    );
  }
  return causes;
}

function checkLabels(labels: unknown, fieldPath: string): StatusCause[] {
  if (!isJsonObject(labels)) return [];
  return Object.entries(labels).flatMap(([key, value]) => {
    const causes = checkQualifiedKey(key, fieldPath);
    const text = String(value);
    if (text.length > 63) causes.push(invalidValue(fieldPath, text, "must be no more than 63 characters"));
    if (!labelValuePattern.test(text)) causes.push(invalidValue(fieldPath, text, labelValueMessage));
    return causes;
  });
}

function checkAnnotations(annotations: unknown): StatusCause[] {
  if (!isJsonObject(annotations)) return [];
  const causes = Object.keys(annotations).flatMap((key) => checkQualifiedKey(key, "metadata.annotations"));
  const size = Object.entries(annotations).reduce(
    (sum, [key, value]) => sum + key.length + String(value).length,
    0,
  );
  if (size > 256 * 1024) {
    causes.push({
      reason: "FieldValueTooLong",
      message: "Too long: must have at most 262144 bytes",
      field: "metadata.annotations",
    });
  }
  return causes;
}

/** The API server's ObjectMeta validation: name, labels, annotations. */
export function validateMetadata(resource: ResourceType, object: JsonObject): void {
  const metadata = (object.metadata ?? {}) as Partial<ObjectMeta>;
  const causes: StatusCause[] = [];
  if (metadata.name) causes.push(...checkName(resource, metadata.name, "metadata.name"));
  else if (metadata.generateName) {
    // The prefix must still yield a valid name once the random suffix is added.
    causes.push(...checkName(resource, `${metadata.generateName}x`, "metadata.generateName"));
  }
  causes.push(...checkLabels(metadata.labels, "metadata.labels"));
  causes.push(...checkAnnotations(metadata.annotations));
  if (causes.length > 0) {
    throw invalid(
      { kind: resource.kind, group: resource.group },
      metadata.name ?? metadata.generateName ?? "",
      causes,
    );
  }
}

function webhookDenied(webhook: string, causes: StatusCause[]): ApiError {
  const message = causes.map((cause) => cause.message).join(", ");
  return new ApiError(422, "Invalid", `admission webhook "${webhook}" denied the request: ${message}`, {
    causes,
  });
}

const runStrategies = ["Always", "Halted", "Manual", "RerunOnFailure", "Once", "WaitAsReceiver"];

/** A quantity that is there and not zero, as resource.Quantity's IsZero sees it (absent is zero). */
function nonZeroQuantity(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  // Anything unparseable is left to schema validation; it is not "missing".
  return parseQuantity(value) !== 0;
}

/**
 * KubeVirt's VMI spec checks that matter for scheduling: some memory has to be asked for
 * (validateMemoryIsProvided in vmi-create-admitter.go, v1.9.0). A memory limit or request that is not
 * zero, any hugepages, or a non-zero guest memory will do.
 */
function validateVmiSpec(spec: unknown, path: string): StatusCause[] {
  const domain = field(spec, "domain");
  const memory = field(domain, "memory");
  const hasMemory =
    nonZeroQuantity(field(domain, "resources", "limits", "memory")) ||
    nonZeroQuantity(field(domain, "resources", "requests", "memory")) ||
    (isJsonObject(memory) && (isJsonObject(memory.hugepages) || nonZeroQuantity(memory.guest)));
  if (hasMemory) return [];
  return [
    {
      reason: "FieldValueInvalid",
      message: `${path}.domain.resources.requests.memory, ${path}.domain.resources.limits.memory, ${path}.domain.memory.hugepages or ${path}.domain.memory.guest should be provided`,
      field: `${path}.domain.resources.limits.memory`,
    },
  ];
}

function admitVirtualMachine(object: JsonObject): string[] {
  const spec = field(object, "spec");
  const running = field(spec, "running");
  const runStrategy = field(spec, "runStrategy");
  const causes: StatusCause[] = [];
  if (running !== undefined && runStrategy !== undefined) {
    causes.push({
      reason: "FieldValueInvalid",
      message:
        "Running and RunStrategy are mutually exclusive. Note that Running is deprecated, please use RunStrategy instead",
      field: "spec.running",
    });
  }
  if (running === undefined && runStrategy === undefined) {
    causes.push({
      reason: "FieldValueInvalid",
      message: "RunStrategy must be specified",
      field: "spec.running",
    });
  }
  if (typeof runStrategy === "string" && !runStrategies.includes(runStrategy)) {
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid RunStrategy (${runStrategy})`,
      field: "spec.runStrategy",
    });
  }
  causes.push(...validateVmiSpec(field(spec, "template", "spec"), "spec.template.spec"));
  if (causes.length > 0) throw webhookDenied("virtualmachine-validator.kubevirt.io", causes);
  return running !== undefined ? ["spec.running is deprecated, please use spec.runStrategy instead."] : [];
}

function admitVirtualMachineInstance(object: JsonObject, operation: Operation): JsonObject {
  const causes = validateVmiSpec(field(object, "spec"), "spec");
  if (causes.length > 0) throw webhookDenied("virtualmachineinstances-create-validator.kubevirt.io", causes);
  return operation === "create" ? mutateNewVmi(object) : object;
}

function admitKubeVirt(object: JsonObject): void {
  const developer = field(object, "spec", "configuration", "developerConfiguration");
  const enabled = field(developer, "featureGates");
  const disabled = field(developer, "disabledFeatureGates");
  if (!Array.isArray(enabled) || !Array.isArray(disabled)) return;
  const both = enabled.filter((gate) => disabled.includes(gate));
  if (both.length > 0) {
    throw webhookDenied("kubevirt-update-validator.kubevirt.io", [
      {
        reason: "FieldValueInvalid",
        message: `feature gates ${both.join(", ")} cannot be both enabled and disabled`,
        field: "spec.configuration.developerConfiguration.disabledFeatureGates",
      },
    ]);
  }
}

const maxSecretBytes = 1024 * 1024;

/** Secrets: base64 data, stringData folded into data (as the API server does), default type, size cap. */
function admitSecret(object: JsonObject): JsonObject {
  const data: Record<string, string> = {};
  const given = isJsonObject(object.data) ? object.data : {};
  for (const [key, value] of Object.entries(given)) {
    const text = String(value);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
      throw badRequest(
        `Secret in version "v1" cannot be handled as a Secret: illegal base64 data in data[${key}]`,
      );
    }
    data[key] = text;
  }
  if (isJsonObject(object.stringData)) {
    for (const [key, value] of Object.entries(object.stringData)) {
      data[key] = Buffer.from(String(value)).toString("base64");
    }
  }
  const size = Object.values(data).reduce((sum, value) => sum + Buffer.from(value, "base64").length, 0);
  if (size > maxSecretBytes) {
    const name = String(field(object, "metadata", "name") ?? "");
    throw invalid({ kind: "Secret", group: "" }, name, [
      {
        reason: "FieldValueTooLong",
        message: `Too long: must have at most ${maxSecretBytes} bytes`,
        field: "data",
      },
    ]);
  }
  const { stringData: _stringData, ...rest } = object;
  return {
    ...rest,
    data,
    type: typeof object.type === "string" && object.type !== "" ? object.type : "Opaque",
  };
}

function admitNamespace(object: JsonObject): JsonObject {
  const metadata = (object.metadata ?? {}) as Partial<ObjectMeta>;
  return {
    ...object,
    metadata: {
      ...metadata,
      labels: { ...metadata.labels, "kubernetes.io/metadata.name": metadata.name ?? "" },
    },
    spec: { finalizers: ["kubernetes"] },
  };
}

export type Operation = "create" | "update";

/** Defaults and validation for a create or update after the schema check. Throws ApiError. */
export function admit(resource: ResourceType, object: JsonObject, operation: Operation): Admitted {
  validateMetadata(resource, object);
  switch (resource) {
    case virtualMachines:
      return { object, warnings: admitVirtualMachine(object) };
    case virtualMachineInstances:
      return { object: admitVirtualMachineInstance(object, operation), warnings: [] };
    case kubeVirts:
      admitKubeVirt(object);
      return { object, warnings: [] };
    case secrets:
      return { object: admitSecret(object), warnings: [] };
    case namespaces:
      return { object: admitNamespace(object), warnings: [] };
    case leases:
      return { object: admitLease(object), warnings: [] };
    case networkPolicies:
      return { object: admitNetworkPolicy(object), warnings: [] };
    default:
      return { object, warnings: [] };
  }
}
