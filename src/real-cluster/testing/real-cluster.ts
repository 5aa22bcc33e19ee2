// A real control plane for one test file (the real-cluster suite, vitest.real-cluster.config.ts):
// kube-apiserver and etcd on a free port, KubeVirt's CRDs, and deploy/base's service account with a
// kubeconfig of its own, so the BFF's code runs with a deployed console's rights. The binary is
// built first when its sources changed (minutes the first time, cached under .lab/real-apiserver).
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { writeBffKubeconfig } from "../bff-account.ts";
import { startControlPlane, type ControlPlane } from "../control-plane.ts";
import { installKubevirtCrds } from "../crds-install.ts";
import { realApiserverBinary } from "../go-binary.ts";
import { cacheDir } from "../locations.ts";

export interface RealCluster {
  /** system:masters, for what only a cluster's administrator does (and for reading back). */
  admin: KubeConfig;
  /** deploy/base's lab-console service account: what the BFF gets in production. */
  bff: KubeConfig;
  plane: ControlPlane;
  stop(): Promise<void>;
}

export async function startRealCluster(): Promise<RealCluster> {
  const binary = await realApiserverBinary((line) => console.log(line));
  const scratch = await mkdtemp(path.join(tmpdir(), "lab-real-cluster-"));
  await mkdir(cacheDir, { recursive: true });
  const plane = await startControlPlane({
    binary,
    kubeconfig: path.join(scratch, "admin.kubeconfig"),
    port: 0,
    logFile: path.join(cacheDir, `apiserver-test-${process.pid}.log`),
  });
  try {
    await installKubevirtCrds(plane.kubeConfig);
    const bffPath = path.join(scratch, "bff.kubeconfig");
    await writeBffKubeconfig(plane.kubeConfig, bffPath);
    const bff = new KubeConfig();
    bff.loadFromFile(bffPath);
    return {
      admin: plane.kubeConfig,
      bff,
      plane,
      async stop() {
        await plane.stop();
        await rm(scratch, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await plane.stop();
    await rm(scratch, { recursive: true, force: true });
    throw error;
  }
}
