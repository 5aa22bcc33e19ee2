import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { timingsFor } from "./timing.ts";
import {
  defaultClusterConfig,
  kubernetesFeatureGates,
  loadClusterConfig,
  parseClusterConfig,
} from "./cluster-config.ts";

describe("cluster config", () => {
  it("defaults to Kubernetes 1.34, KubeVirt v1.9.0 and three 32 CPU / 128Gi KVM nodes", () => {
    const config = defaultClusterConfig();
    expect(config.kubernetes.version).toBe("v1.34.1");
    expect(config.kubevirt).toMatchObject({ version: "v1.9.0", cpuAllocationRatio: 10 });
    expect(config.nodes.map((node) => [node.name, node.cpu, node.memory, node.kvm])).toEqual([
      ["node01", "32", "128Gi", true],
      ["node02", "32", "128Gi", true],
      ["node03", "32", "128Gi", true],
    ]);
  });

  it("declares guest images with the commands they ship, and refuses paths for commands", () => {
    expect(defaultClusterConfig().images).toEqual([]);
    const config = parseClusterConfig({
      images: [{ image: "registry.example/minimal:1", commands: ["bash", "ls"] }],
    });
    expect(config.images).toEqual([
      { image: "registry.example/minimal:1", commands: ["bash", "ls"], packageManager: "none" },
    ]);
    expect(() => parseClusterConfig({ images: [{ image: "x", commands: ["/usr/bin/node"] }] })).toThrow(
      /must be a command name, not a path\n {2}→ at images\[0\]\.commands\[0\]/,
    );
  });

  it("limits each guest to 512 processes and a 1Gi disk unless told otherwise, and refuses tiny ones", () => {
    expect(defaultClusterConfig().guestLimits).toEqual({ pids: 512, disk: "1Gi", memory: "1Gi" });
    expect(parseClusterConfig({ guestLimits: { disk: "256Mi" } }).guestLimits).toEqual({
      pids: 512,
      disk: "256Mi",
      memory: "1Gi",
    });
    expect(() => parseClusterConfig({ guestLimits: { pids: 4, disk: "1Ki" } })).toThrow(
      /at guestLimits\.pids[\s\S]*must be at least 1Mi\n {2}→ at guestLimits\.disk/,
    );
  });

  it("reads a YAML file and reports every problem at once", () => {
    const dir = mkdtempSync(join(tmpdir(), "cluster-config-"));
    const good = join(dir, "good.yaml");
    writeFileSync(
      good,
      "kubevirt:\n  disabledFeatureGates: [ImageVolume]\nnodes:\n  - name: big\n    memory: 1Ti\n",
    );
    expect(loadClusterConfig(good)).toMatchObject({
      kubevirt: { disabledFeatureGates: ["ImageVolume"] },
      nodes: [{ name: "big", memory: "1Ti", cpu: "32" }],
    });
    const bad = join(dir, "bad.yaml");
    writeFileSync(
      bad,
      'kubernetes:\n  version: "1.34"\nnodes:\n  - name: n\n    memory: lots\n  - name: Bad_Node\n',
    );
    const message = (() => {
      try {
        loadClusterConfig(bad);
        return "";
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toContain("must look like v1.34.1");
    expect(message).toContain("must be a quantity");
    expect(message).toContain("must be a lowercase RFC 1123 subdomain");
    // Checks across fields run once every field is valid.
    const inconsistent = join(dir, "inconsistent.yaml");
    writeFileSync(
      inconsistent,
      "kubevirt:\n  featureGates: [A]\n  disabledFeatureGates: [A]\nnodes:\n  - name: n\n  - name: n\n",
    );
    expect(() => loadClusterConfig(inconsistent)).toThrow(
      /node "n" is listed twice[\s\S]*A cannot be both enabled and disabled/,
    );
    expect(() => loadClusterConfig(join(dir, "missing.yaml"))).toThrow(/cannot read cluster config/);
  });

  it("derives the Kubernetes gates the API server reports, defaults by version", () => {
    expect(kubernetesFeatureGates(defaultClusterConfig())).toEqual([
      { name: "ImageVolume", stage: "BETA", enabled: false },
    ]);
    expect(
      kubernetesFeatureGates(parseClusterConfig({ kubernetes: { version: "v1.35.0" } }))[0]?.enabled,
    ).toBe(true);
    const custom = parseClusterConfig({
      kubernetes: { featureGates: { ImageVolume: true, Other: { enabled: false, stage: "ALPHA" } } },
    });
    expect(kubernetesFeatureGates(custom)).toEqual([
      { name: "ImageVolume", stage: "BETA", enabled: true },
      { name: "Other", stage: "ALPHA", enabled: false },
    ]);
  });
});

describe("timings", () => {
  it("puts Scheduled at 10 s and Running at 20 s in realistic mode, and stays under a second in fast mode", () => {
    const realistic = timingsFor("realistic");
    expect(realistic.toScheduling + realistic.toScheduled).toBe(10_000);
    expect(realistic.toScheduling + realistic.toScheduled + realistic.toRunning).toBe(20_000);
    const fast = timingsFor("fast");
    expect(fast.toScheduling + fast.toScheduled + fast.toRunning + fast.toStopped).toBeLessThan(1000);
  });
});
