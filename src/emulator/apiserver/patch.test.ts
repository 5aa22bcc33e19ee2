import { describe, expect, it } from "vitest";
import { ApiError } from "../http/status.ts";
import { jsonPatch, mergePatch } from "./patch.ts";

describe("mergePatch (RFC 7386)", () => {
  it("merges objects, replaces arrays and removes keys set to null", () => {
    const target = { a: 1, b: { c: 2, d: 3 }, list: [1, 2] };
    expect(mergePatch(target, { b: { c: null, e: 4 }, list: [3], f: "x" })).toEqual({
      a: 1,
      b: { d: 3, e: 4 },
      list: [3],
      f: "x",
    });
    expect(target.b).toEqual({ c: 2, d: 3 });
  });

  it("replaces the whole document with a non-object patch", () => {
    expect(mergePatch({ a: 1 }, ["x"])).toEqual(["x"]);
  });
});

describe("jsonPatch (RFC 6902)", () => {
  const document = { spec: { runStrategy: "Halted", list: ["a", "b"] }, "we/ird~key": 1 };

  it("applies add, replace, remove, move, copy and test", () => {
    const result = jsonPatch(document, [
      { op: "test", path: "/spec/runStrategy", value: "Halted" },
      { op: "replace", path: "/spec/runStrategy", value: "Always" },
      { op: "add", path: "/spec/list/-", value: "c" },
      { op: "add", path: "/spec/list/0", value: "z" },
      { op: "remove", path: "/spec/list/1" },
      { op: "copy", from: "/spec/runStrategy", path: "/copied" },
      { op: "move", from: "/we~1ird~0key", path: "/moved" },
    ]);
    expect(result).toEqual({
      spec: { runStrategy: "Always", list: ["z", "b", "c"] },
      copied: "Always",
      moved: 1,
    });
    expect(document.spec.runStrategy).toBe("Halted");
  });

  it("rejects a failed test with 422 and leaves nothing half-applied", () => {
    const attempt = () =>
      jsonPatch(document, [
        { op: "replace", path: "/spec/runStrategy", value: "Always" },
        { op: "test", path: "/spec/runStrategy", value: "Halted" },
      ]);
    expect(attempt).toThrow(ApiError);
    expect(attempt).toThrow(/testing value \/spec\/runStrategy failed/);
    expect(document.spec.runStrategy).toBe("Halted");
  });

  it("refuses paths that do not exist and malformed patches", () => {
    expect(() => jsonPatch(document, [{ op: "replace", path: "/spec/missing", value: 1 }])).toThrow(
      /missing key/,
    );
    expect(() => jsonPatch(document, [{ op: "remove", path: "/spec/list/5" }])).toThrow(/out of bounds/);
    expect(() => jsonPatch(document, { op: "add" })).toThrow(/array of operations/);
    expect(() => jsonPatch(document, [{ op: "frobnicate", path: "/a" }])).toThrow(
      /unknown json patch operation/,
    );
  });
});
