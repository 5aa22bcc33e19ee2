import { describe, expect, it } from "vitest";
import { mergePatch } from "./merge-patch.ts";

describe("mergePatch", () => {
  it("is undefined for equal objects", () => {
    expect(mergePatch({ a: 1, b: { c: [1, 2] } }, { a: 1, b: { c: [1, 2] } })).toBeUndefined();
  });

  it("sends changed and added keys, nested, and null for removed ones", () => {
    const before = { metadata: { labels: { keep: "1", gone: "x" }, finalizers: ["a"] }, spec: { n: 1 } };
    const after = { metadata: { labels: { keep: "1", added: "y" } }, spec: { n: 2 } };
    expect(mergePatch(before, after)).toEqual({
      metadata: { labels: { gone: null, added: "y" }, finalizers: null },
      spec: { n: 2 },
    });
  });

  it("sends a changed array whole, as RFC 7386 cannot change part of one", () => {
    const before = { status: { conditions: [{ type: "Ready", status: "False" }, { type: "Paused" }] } };
    const after = { status: { conditions: [{ type: "Ready", status: "True" }, { type: "Paused" }] } };
    expect(mergePatch(before, after)).toEqual(after);
  });

  it("replaces a scalar with an object and the other way round", () => {
    expect(mergePatch({ a: "x", b: { c: 1 } }, { a: { d: 1 }, b: 2 })).toEqual({ a: { d: 1 }, b: 2 });
  });
});
