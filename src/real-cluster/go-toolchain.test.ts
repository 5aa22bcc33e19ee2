import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseGoModule, versionAtLeast } from "./go-toolchain.ts";
import { goModuleDir } from "./locations.ts";

describe("versionAtLeast", () => {
  it("compares number by number, not as text", () => {
    expect(versionAtLeast("1.26.8", "1.24.0")).toBe(true);
    expect(versionAtLeast("1.9", "1.24.0")).toBe(false);
    expect(versionAtLeast("1.24.10", "1.24.9")).toBe(true);
    expect(versionAtLeast("2.0", "1.99.99")).toBe(true);
  });

  it("takes a missing part for 0, so the go.mod's own version is enough", () => {
    expect(versionAtLeast("1.24", "1.24.0")).toBe(true);
    expect(versionAtLeast("1.24.0", "1.24")).toBe(true);
    expect(versionAtLeast("1.24", "1.24.1")).toBe(false);
  });
});

describe("parseGoModule", () => {
  it("reads the Go, Kubernetes and etcd versions from cluster/real-apiserver/go.mod", () => {
    const mod = parseGoModule(readFileSync(path.join(goModuleDir, "go.mod"), "utf8"));
    expect(mod.go).toMatch(/^1\.\d+(\.\d+)?$/);
    expect(mod.kubernetes).toMatch(/^v1\.34\.\d+$/);
    expect(mod.etcd).toMatch(/^v3\.\d+\.\d+$/);
  });

  it("names what a go.mod lacks", () => {
    expect(() => parseGoModule("module x\n\ngo 1.24.0\n")).toThrow(/k8s\.io\/kubernetes/);
  });
});
