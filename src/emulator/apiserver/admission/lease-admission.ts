// coordination.k8s.io/v1 Leases as the API server takes them: MicroTime fields decoded the way Go's
// time.Parse reads RFC3339Micro (exactly six fractional digits; a JavaScript Date's
// toISOString() has three and is refused with a 400) and stored in UTC, then the
// coordination validation of the spec.
import { isJsonObject, type JsonObject } from "../../cluster/objects.ts";
import { badRequest, invalid, type StatusCause } from "../../http/status.ts";

const rfc3339Micro = "2006-01-02T15:04:05.000000Z07:00";
const microTimeFields = ["acquireTime", "renewTime"] as const;
const strategies = ["OldestEmulationVersion"];

// Go's time.Parse error for the element that did not fit, e.g. `cannot parse ".123Z" as ".000000"`.
function parseFailure(value: string, valueElement: string, layoutElement: string): Error {
  return new Error(
    `parsing time ${JSON.stringify(value)} as ${JSON.stringify(rfc3339Micro)}: cannot parse ${JSON.stringify(valueElement)} as ${JSON.stringify(layoutElement)}`,
  );
}

/** metav1.MicroTime's decoding: the time in UTC with six fractional digits, or the parse error. */
export function normalizeMicroTime(value: string): string {
  const head = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})/.exec(value);
  if (!head?.[1]) throw parseFailure(value, value, "2006");
  const rest = value.slice(head[1].length);
  const fraction = /^\.(\d{6})/.exec(rest);
  if (!fraction?.[1]) throw parseFailure(value, rest, ".000000");
  const zone = rest.slice(fraction[0].length);
  if (zone !== "Z" && !/^[+-]\d{2}:\d{2}$/.test(zone)) throw parseFailure(value, zone, "Z07:00");
  const seconds = new Date(`${head[1]}${zone}`);
  if (Number.isNaN(seconds.getTime())) throw parseFailure(value, value, rfc3339Micro);
  return `${seconds.toISOString().slice(0, 19)}.${fraction[1]}Z`;
}

function decodeFailure(error: unknown): Error {
  return badRequest(
    `Lease in version "v1" cannot be handled as a Lease: ${error instanceof Error ? error.message : String(error)}`,
  );
}

function specCauses(spec: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const { leaseDurationSeconds, leaseTransitions, strategy, preferredHolder } = spec;
  if (typeof leaseDurationSeconds === "number" && leaseDurationSeconds <= 0) {
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: ${leaseDurationSeconds}: must be greater than 0`,
      field: "spec.leaseDurationSeconds",
    });
  }
  if (typeof leaseTransitions === "number" && leaseTransitions < 0) {
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: ${leaseTransitions}: must be greater than or equal to 0`,
      field: "spec.leaseTransitions",
    });
  }
  if (typeof strategy === "string" && !strategies.includes(strategy)) {
    causes.push({
      reason: "FieldValueNotSupported",
      message: `Unsupported value: ${JSON.stringify(strategy)}: supported values: ${strategies.map((s) => JSON.stringify(s)).join(", ")}`,
      field: "spec.strategy",
    });
  }
  if (typeof preferredHolder === "string" && preferredHolder !== "" && !strategy) {
    causes.push({
      reason: "FieldValueForbidden",
      message: "Forbidden: may only be specified if `strategy` is defined",
      field: "spec.preferredHolder",
    });
  }
  return causes;
}

export function admitLease(object: JsonObject): JsonObject {
  if (!isJsonObject(object.spec)) return object;
  const spec: JsonObject = { ...object.spec };
  for (const name of microTimeFields) {
    const value = spec[name];
    if (typeof value !== "string") continue;
    try {
      spec[name] = normalizeMicroTime(value);
    } catch (error) {
      throw decodeFailure(error);
    }
  }
  const causes = specCauses(spec);
  if (causes.length > 0) {
    const name = isJsonObject(object.metadata) ? String(object.metadata.name ?? "") : "";
    throw invalid({ kind: "Lease", group: "coordination.k8s.io" }, name, causes);
  }
  return { ...object, spec };
}
