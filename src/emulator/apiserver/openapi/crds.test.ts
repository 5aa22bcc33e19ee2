import { describe, expect, it } from "vitest";
import { virtualMachines } from "../../cluster/resources.ts";
import {
  customResourceDefinition,
  kubevirtCustomResourceDefinitions,
  structuralSchema,
  type CrdSchema,
} from "./crds.ts";

/** Every node of a schema with its path, e.g. `.spec.template.spec.volumes[]`. */
function* nodes(schema: CrdSchema, path = ""): Generator<[string, CrdSchema]> {
  yield [path, schema];
  for (const [key, child] of Object.entries(schema.properties ?? {})) yield* nodes(child, `${path}.${key}`);
  if (schema.items !== undefined) yield* nodes(schema.items, `${path}[]`);
  if (schema.additionalProperties !== undefined) yield* nodes(schema.additionalProperties, `${path}{}`);
}

function at(schema: CrdSchema, path: string): CrdSchema {
  for (const [where, node] of nodes(schema)) if (where === path) return node;
  throw new Error(`no ${path}`);
}

const crds = kubevirtCustomResourceDefinitions();
const schemaOf = (name: string): CrdSchema => {
  const crd = crds.find((c) => c.metadata.name === name);
  if (crd?.spec.versions[0] === undefined) throw new Error(`no CRD ${name}`);
  return crd.spec.versions[0].schema.openAPIV3Schema;
};

describe("KubeVirt's CRDs", () => {
  it("name the kinds as the emulator serves them, a status subresource on VMs and not on VMIs", () => {
    expect(
      crds.map((c) => [
        c.metadata.name,
        c.spec.names.shortNames,
        c.spec.versions[0]?.subresources !== undefined,
      ]),
    ).toEqual([
      ["virtualmachines.kubevirt.io", ["vm", "vms"], true],
      ["virtualmachineinstances.kubevirt.io", ["vmi", "vmis"], false],
      ["kubevirts.kubevirt.io", ["kv", "kvs"], true],
    ]);
    expect(crds.every((c) => c.spec.scope === "Namespaced" && c.spec.group === "kubevirt.io")).toBe(true);
  });

  it("are structural: no $ref, a type or an int-or-string on every node, metadata only as an object", () => {
    for (const crd of crds) {
      const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
      expect(schema.properties?.metadata).toEqual({ type: "object" });
      for (const [path, node] of nodes(schema)) {
        expect(node, `${crd.metadata.name} ${path}`).not.toHaveProperty("$ref");
        expect(node, `${crd.metadata.name} ${path}`).not.toHaveProperty("default");
        expect(node, `${crd.metadata.name} ${path}`).not.toHaveProperty("x-kubernetes-patch-strategy");
        expect(node.type !== undefined || node["x-kubernetes-int-or-string"] === true, `${path}`).toBe(true);
      }
    }
  });

  it("give the apimachinery types the forms KubeVirt's CRDs give them", () => {
    const vm = schemaOf("virtualmachines.kubevirt.io");
    expect(at(vm, ".spec.template.metadata")).toMatchObject({
      type: "object",
      nullable: true,
      "x-kubernetes-preserve-unknown-fields": true,
    });
    expect(at(vm, ".spec.template.spec.domain.resources.requests{}")).toMatchObject({
      anyOf: [{ type: "integer" }, { type: "string" }],
      "x-kubernetes-int-or-string": true,
    });
    expect(at(vm, ".status.conditions[].lastTransitionTime")).toMatchObject({
      type: "string",
      format: "date-time",
      nullable: true,
    });
    expect(at(vm, ".spec.template.spec.readinessProbe.httpGet.port")).toMatchObject({
      "x-kubernetes-int-or-string": true,
    });
    expect(at(vm, ".spec.runStrategy").type).toBe("string");
  });

  it("keeps a field's own description over its type's", () => {
    const vm = schemaOf("virtualmachines.kubevirt.io");
    expect(at(vm, ".spec").description).toMatch(/^Spec contains the specification of VirtualMachineInstance/);
  });

  it("names the chain of definitions when it cannot express one", () => {
    const defs = {
      "v1.A": { type: "object", properties: { b: { $ref: "#/definitions/v1.B" } } },
      "v1.B": { type: "object", properties: { a: { $ref: "#/definitions/v1.A" } } },
      "v1.C": { type: "object", properties: { odd: { type: ["boolean", "null"] } } },
    };
    expect(() => structuralSchema("v1.A", defs)).toThrow("recursive schema: v1.A > b > v1.B > a > v1.A");
    expect(() => structuralSchema("v1.C", defs)).toThrow("cannot express types boolean, null at v1.C > odd");
    expect(() => customResourceDefinition({ ...virtualMachines, schema: "v1.Missing" }, defs)).toThrow(
      "no definition v1.Missing",
    );
  });
});
