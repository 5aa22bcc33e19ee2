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
    expect(refusal(attempt)).toEqual({
      status: 422,
      message: "the server rejected our request due to an error in our request",
    });
    expect(document.spec.runStrategy).toBe("Halted");
  });

  it("tests a missing member as null, as the API server's patch library does, but not a missing parent", () => {
    const notDeleting = { metadata: { name: "vm" } };
    const deleting = { metadata: { name: "vm", deletionTimestamp: "2030-01-01T00:00:00Z" } };
    const unlessDeleting = [{ op: "test", path: "/metadata/deletionTimestamp", value: null }];
    expect(jsonPatch(notDeleting, unlessDeleting)).toEqual(notDeleting);
    expect(refusal(() => jsonPatch(deleting, unlessDeleting))?.status).toBe(422);
    expect(
      refusal(() => jsonPatch(notDeleting, [{ op: "test", path: "/status/phase", value: null }])),
    ).toEqual({
      status: 422,
      message: "the server rejected our request due to an error in our request",
    });
  });

  it("answers paths that do not exist and unknown operations with 422, a patch that is no list with 400", () => {
    for (const patch of [
      [{ op: "replace", path: "/spec/missing", value: 1 }],
      [{ op: "remove", path: "/spec/list/5" }],
      [{ op: "frobnicate", path: "/a" }],
    ]) {
      expect(refusal(() => jsonPatch(document, patch))?.status).toBe(422);
    }
    expect(refusal(() => jsonPatch(document, { op: "add" }))).toMatchObject({ status: 400 });
  });
});

/** The API error a patch is refused with: its status and message. */
function refusal(attempt: () => unknown): { status: number; message: string } | undefined {
  try {
    attempt();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.code, message: error.message };
    throw error;
  }
  return undefined;
}
