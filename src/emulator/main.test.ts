// `npm run emulator` as its own process, the way the BFF spawns it: RBAC from deploy/base with a
// kubeconfig for the BFF's service account, the guests' folder of a crashed emulator cleared at start,
// and shutdown (guests included) as soon as stdin closes.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, expect, it } from "vitest";
import { vmManifest } from "./testing/manifests.ts";
import { spawnEmulator } from "./testing/process.ts";
import { jsonRequest } from "./testing/raw-request.ts";
import { deployBaseDir, eventually } from "./testing/start.ts";

const dir = mkdtempSync(join(tmpdir(), "lab-emulator-main-"));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("serves with RBAC and a service account's kubeconfig, clears stale guests and exits when stdin closes", async () => {
  const stateDir = join(dir, "state");
  // Left by an emulator that was SIGKILLed: no process has this pid (above Linux's pid_max).
  const stale = join(stateDir, "guests", "99999999");
  mkdirSync(join(stale, "vm-abc", "home"), { recursive: true });
  const bffKubeconfig = join(dir, "bff-kubeconfig");
  const { child, url, exited } = await spawnEmulator([
    "--port",
    "0",
    "--timing",
    "fast",
    "--state-dir",
    stateDir,
    "--kubeconfig",
    join(dir, "kubeconfig"),
    "--rbac",
    deployBaseDir,
    "--service-account-kubeconfig",
    `lab-console/lab-console=${bffKubeconfig}`,
    "--exit-with-stdin",
  ]);
  try {
    expect(existsSync(stale)).toBe(false);

    const kubeconfigPath = join(dir, "kubeconfig");
    const adminConfig = new KubeConfig();
    adminConfig.loadFromFile(kubeconfigPath);
    const emulator = { url, kubeconfigPath, adminToken: adminConfig.getCurrentUser()?.token ?? "" };
    const bff = new KubeConfig();
    bff.loadFromFile(bffKubeconfig);
    expect(bff.getCurrentCluster()?.server).toBe(url);
    const bffToken = bff.getCurrentUser()?.token ?? "";
    const vms = "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachines";
    expect((await jsonRequest(emulator, "GET", vms, undefined, { token: bffToken })).status).toBe(200);
    expect(
      (
        await jsonRequest(emulator, "GET", "/api/v1/namespaces/lab-sessions/secrets", undefined, {
          token: bffToken,
        })
      ).status,
    ).toBe(403);

    // A running guest, to see it go with the emulator.
    expect((await jsonRequest(emulator, "POST", vms, vmManifest("main-vm"))).status).toBe(201);
    const ownGuests = join(stateDir, "guests", String(child.pid));
    await eventually(async () => {
      const vmi = await jsonRequest(
        emulator,
        "GET",
        "/apis/kubevirt.io/v1/namespaces/lab-sessions/virtualmachineinstances/main-vm",
      );
      const phase = (vmi.json as { status?: { phase?: string } }).status?.phase;
      return phase === "Running" ? true : undefined;
    });
    expect(existsSync(ownGuests)).toBe(true);

    child.stdin.end();
    expect(await exited).toBe(0);
    expect(existsSync(ownGuests)).toBe(false);
  } finally {
    child.kill("SIGKILL");
  }
}, 30_000);
