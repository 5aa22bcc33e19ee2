import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { labSchemaPath, renderLabSchema } from "../../../scripts/lab-schema.ts";

const examplesDir = new URL("../../../labs", import.meta.url).pathname;

describe("docs/lab.schema.json", () => {
  const committed = readFileSync(labSchemaPath, "utf8");

  it("is what npm run schema:labs generates from the zod schema", async () => {
    expect(committed).toBe(await renderLabSchema());
  });

  it("accepts the example labs and refuses what the loader refuses", () => {
    const validate = new Ajv2020({ allErrors: true }).compile(JSON.parse(committed));
    for (const name of readdirSync(examplesDir)) {
      const valid = validate(parse(readFileSync(join(examplesDir, name), "utf8")));
      expect({ name, errors: validate.errors ?? [] }).toEqual({ name, errors: [] });
      expect(valid).toBe(true);
    }
    const lab = { id: "x", title: "X", vm: { image: "quay.io/containerdisks/fedora:41" } };
    expect(validate({ ...lab, vm: { ...lab.vm, size: "small" } })).toBe(true);
    expect(validate({ ...lab, vm: { ...lab.vm, cpu: 2, memory: "4Gi" } })).toBe(true);
    expect(validate({ ...lab, vm: { ...lab.vm, size: "small", cpu: 2 } })).toBe(false);
    expect(validate({ ...lab, vm: { ...lab.vm, cpu: 2 } })).toBe(false);
    expect(validate({ ...lab, vm: { ...lab.vm, size: "small" }, titel: "typo" })).toBe(false);
  });
});
