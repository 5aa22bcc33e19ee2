import { describe, expect, it } from "vitest";
import type { KubeObject } from "../cluster/objects.ts";
import { events, virtualMachines } from "../cluster/resources.ts";
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "./selectors.ts";

describe("label selectors", () => {
  const labels = { app: "lab", "labconsole.dev/lab": "linux-101", tier: "student" };

  it("understands equality, set and existence terms", () => {
    expect(matchesLabels(parseLabelSelector("app=lab,tier==student"), labels)).toBe(true);
    expect(matchesLabels(parseLabelSelector("app!=lab"), labels)).toBe(false);
    expect(matchesLabels(parseLabelSelector("labconsole.dev/lab in (linux-101, net-201)"), labels)).toBe(
      true,
    );
    expect(matchesLabels(parseLabelSelector("tier notin (student)"), labels)).toBe(false);
    expect(matchesLabels(parseLabelSelector("app,!missing"), labels)).toBe(true);
    expect(matchesLabels(parseLabelSelector("missing"), labels)).toBe(false);
    expect(matchesLabels(parseLabelSelector(""), undefined)).toBe(true);
  });

  it("rejects invalid keys with a 400", () => {
    expect(() => parseLabelSelector("bad key=1")).toThrow(/invalid label key/);
  });
});

describe("field selectors", () => {
  const vm = {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachine",
    metadata: { name: "a", namespace: "ns" },
  } as KubeObject;

  it("matches metadata fields and refuses unsupported ones like the API server", () => {
    expect(
      matchesFields(parseFieldSelector("metadata.name=a,metadata.namespace!=other", virtualMachines), vm),
    ).toBe(true);
    expect(matchesFields(parseFieldSelector("metadata.name=b", virtualMachines), vm)).toBe(false);
    expect(() => parseFieldSelector("spec.running=true", virtualMachines)).toThrow(
      "field label not supported: spec.running",
    );
    expect(parseFieldSelector("involvedObject.uid=1", events)).toHaveLength(1);
  });
});
