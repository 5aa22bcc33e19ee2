import { describe, expect, it } from "vitest";
import { checkAgainstSchema } from "./schema.ts";

const vm = {
  apiVersion: "kubevirt.io/v1",
  kind: "VirtualMachine",
  metadata: { name: "vm", creationTimestamp: null, bogus: 1 },
  spec: {
    runStrategy: "Always",
    extra: true,
    template: {
      metadata: { creationTimestamp: null, labels: { a: "b" } },
      spec: {
        domain: { devices: {}, memory: { guest: "1Gi" }, resources: { requests: { cpu: 2 } } },
        unknownToo: {},
      },
    },
  },
};

describe("checkAgainstSchema", () => {
  it("prunes unknown fields, reports their paths and drops nulls of non-nullable fields", () => {
    const result = checkAgainstSchema(vm, "v1.VirtualMachine");
    expect(result.causes).toEqual([]);
    expect(result.unknownFields).toEqual(["metadata.bogus", "spec.extra", "spec.template.spec.unknownToo"]);
    expect(result.value.metadata).toEqual({ name: "vm" });
    expect(result.value.spec).not.toHaveProperty("extra");
    // An embedded template's metadata is kept as given, as CRD schemas do.
    expect((result.value.spec as { template: { metadata: unknown } }).template.metadata).toEqual({
      creationTimestamp: null,
      labels: { a: "b" },
    });
  });

  it("accepts numbers for quantities and reports wrong types and missing required fields per field", () => {
    const result = checkAgainstSchema(
      {
        apiVersion: "kubevirt.io/v1",
        kind: "VirtualMachine",
        metadata: { name: "vm", labels: { a: 1 } },
        spec: { running: "yes" },
      },
      "v1.VirtualMachine",
    );
    expect(result.causes).toEqual([
      {
        reason: "FieldValueInvalid",
        message: 'Invalid value: "integer": metadata.labels[a] in body must be of type string: "integer"',
        field: "metadata.labels[a]",
      },
      {
        reason: "FieldValueInvalid",
        message: 'Invalid value: "string": spec.running in body must be of type boolean: "string"',
        field: "spec.running",
      },
      { reason: "FieldValueRequired", message: "Required value", field: "spec.template" },
    ]);
  });
});
