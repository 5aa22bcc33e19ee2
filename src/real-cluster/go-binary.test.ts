import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { linkFlags, sourceHash } from "./go-binary.ts";

describe("sourceHash", () => {
  let dir: string;
  const goLine = "go version go1.26.8 linux/amd64";
  const hash = () => sourceHash(dir, goLine, "-s -w");

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "real-apiserver-sources-"));
    await writeFile(path.join(dir, "main.go"), "package main\n");
    await writeFile(path.join(dir, "go.mod"), "module x\n\ngo 1.24.0\n");
    await writeFile(path.join(dir, "go.sum"), "");
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("stays the same while nothing it is built from changes", async () => {
    expect(await hash()).toBe(await hash());
  });

  it("changes when a Go file, go.mod or go.sum changes, or a Go file is added", async () => {
    const seen = new Set([await hash()]);
    await writeFile(path.join(dir, "main.go"), "package main\n\nfunc main() {}\n");
    seen.add(await hash());
    await writeFile(path.join(dir, "go.mod"), "module x\n\ngo 1.25.0\n");
    seen.add(await hash());
    await writeFile(path.join(dir, "go.sum"), "example.com/m v1.0.0 h1:abc=\n");
    seen.add(await hash());
    await writeFile(path.join(dir, "pki.go"), "package main\n");
    seen.add(await hash());
    expect(seen.size).toBe(5);
  });

  it("changes with the toolchain and the link flags", async () => {
    const before = await hash();
    expect(await sourceHash(dir, "go version go1.26.9 linux/amd64", "-s -w")).not.toBe(before);
    expect(await sourceHash(dir, goLine, "-s -w -X v=1")).not.toBe(before);
  });

  it("ignores files the build does not read", async () => {
    const before = await hash();
    await writeFile(path.join(dir, "README.md"), "notes\n");
    await writeFile(path.join(dir, "main.go.orig"), "package main\n");
    expect(await hash()).toBe(before);
  });
});

describe("linkFlags", () => {
  it("stamps the Kubernetes version the server reports", () => {
    const flags = linkFlags({ go: "1.24.0", kubernetes: "v1.34.3", etcd: "v3.6.4" });
    expect(flags).toContain("k8s.io/component-base/version.gitVersion=v1.34.3");
    expect(flags).toContain("version.gitMajor=1 ");
    expect(flags).toContain("version.gitMinor=34 ");
  });
});
