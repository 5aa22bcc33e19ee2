// The emulator behind a path prefix, as a cluster is reached through Rancher's proxy
// (https://rancher.example/k8s/clusters/c-1): the API answers only below the prefix, requests without
// it get the proxy's 404, the kubeconfigs carry the prefixed server URL, and kubectl works through it.
// `--path-prefix` on the command line does the same.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vmManifest } from "../testing/manifests.ts";
import { spawnEmulator } from "../testing/process.ts";
import { jsonRequest, rawRequest } from "../testing/raw-request.ts";
import { startTestEmulator, type TestEmulator } from "../testing/start.ts";
import { openStream, UpgradeRefused } from "../testing/websocket.ts";
import { normalizePathPrefix } from "./path-prefix.ts";

const run = promisify(execFile);
const prefix = "/k8s/clusters/c-1";
const vms = "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachines";
let cluster: TestEmulator;
let origin: string;

beforeAll(async () => {
  cluster = await startTestEmulator({ pathPrefix: prefix, deployRbac: true });
  origin = new URL(cluster.emulator.url).origin;
});

afterAll(async () => {
  await cluster?.close();
});

describe("the emulator behind a path prefix", () => {
  it("puts the prefix into its URL and every kubeconfig it writes", () => {
    expect(cluster.emulator.url).toBe(`${origin}${prefix}`);
    expect(cluster.kubeConfig.getCurrentCluster()?.server).toBe(`${origin}${prefix}`);
    expect(cluster.bffKubeConfig().getCurrentCluster()?.server).toBe(`${origin}${prefix}`);
  });

  it("answers below the prefix only; anything else gets the proxy's 404", async () => {
    // The helpers resolve absolute paths against the origin, so the prefix is spelled out here.
    expect((await rawRequest(cluster.emulator, "GET", `${prefix}/version`)).status).toBe(200);
    expect((await rawRequest(cluster.emulator, "GET", `${prefix}/api`)).status).toBe(200);
    expect((await rawRequest(cluster.emulator, "GET", `${prefix}/version?timeout=1s`)).status).toBe(200);
    for (const path of ["/version", "/api", vms, "/metrics", "/k8s/clusters/c-10/api", "/k8s/clusters"]) {
      const answer = await rawRequest(cluster.emulator, "GET", path);
      expect(answer.status, path).toBe(404);
      expect(answer.text, path).toBe("404 page not found\n");
    }
    const console =
      "/apis/subresources.kubevirt.io/v1/namespaces/lab-sessions/virtualmachineinstances/x/console";
    const refused = await openStream(cluster.emulator, console).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(UpgradeRefused);
    expect((refused as UpgradeRefused).status).toBe(404);
    // Below the prefix the same upgrade reaches the API server, which knows no such VMI.
    const below = await openStream(cluster.emulator, `${prefix}${console}`).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((below as UpgradeRefused).status).toBe(404);
    expect(JSON.parse((below as UpgradeRefused).body)).toMatchObject({ kind: "Status", reason: "NotFound" });
  });

  it("serves kubectl through the prefixed kubeconfig", async () => {
    const created = await jsonRequest(
      cluster.emulator,
      "POST",
      `${prefix}${vms}`,
      vmManifest("behind-proxy"),
    );
    expect(created.status).toBe(201);
    const { stdout } = await run(
      "kubectl",
      [
        "--kubeconfig",
        cluster.emulator.kubeconfigPath,
        "--cache-dir",
        join(cluster.dir, "kube-cache"),
        "get",
        "vm",
        "-A",
      ],
      { timeout: 20_000 },
    );
    expect(stdout).toMatch(/^NAMESPACE\s+NAME\s+AGE\s+STATUS\s+READY/);
    expect(stdout).toMatch(/\nlab-sessions\s+behind-proxy\s/);
  });

  it("takes only prefixes that a URL path can carry as they are", () => {
    expect(normalizePathPrefix(undefined)).toBe("");
    expect(normalizePathPrefix("/")).toBe("");
    expect(normalizePathPrefix("/k8s/clusters/c-1/")).toBe("/k8s/clusters/c-1");
    for (const bad of ["k8s", "/a b", "/a/../b", "/a?x=1", "/a#b", "/a//b"]) {
      expect(() => normalizePathPrefix(bad), bad).toThrow(/path prefix/);
    }
  });
});

it("takes --path-prefix on the command line and writes it into the kubeconfig", async () => {
  const dir = mkdtempSync(join(tmpdir(), "lab-emulator-prefix-"));
  const kubeconfigPath = join(dir, "kubeconfig");
  const { child, url, exited } = await spawnEmulator([
    ...["--port", "0", "--timing", "fast", "--guests", "none"],
    ...["--state-dir", join(dir, "state"), "--kubeconfig", kubeconfigPath],
    ...["--path-prefix", prefix, "--exit-with-stdin"],
  ]);
  try {
    expect(new URL(url).pathname).toBe(prefix);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    expect(kubeConfig.getCurrentCluster()?.server).toBe(url);
    const emulator = { url, kubeconfigPath, adminToken: kubeConfig.getCurrentUser()?.token ?? "" };
    expect((await rawRequest(emulator, "GET", `${prefix}/version`)).status).toBe(200);
    expect((await rawRequest(emulator, "GET", "/version")).status).toBe(404);
    child.stdin.end();
    expect(await exited).toBe(0);
  } finally {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
