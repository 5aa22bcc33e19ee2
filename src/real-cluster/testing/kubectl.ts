// kubectl, the real client, against a real cluster's kubeconfig: what an operator would type.
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { KubeConfig } from "@kubernetes/client-node";

const run = promisify(execFile);

export interface Kubectl {
  /** kubectl's stdout; rejects with its stderr when it exits non-zero. */
  (...args: string[]): Promise<string>;
  kubeconfigPath: string;
}

/** kubectl with this KubeConfig, written to a file of its own (a fresh temporary folder). */
export async function kubectlFor(kubeConfig: KubeConfig): Promise<Kubectl> {
  const kubeconfigPath = path.join(await mkdtemp(path.join(tmpdir(), "lab-kubectl-")), "kubeconfig");
  await writeFile(kubeconfigPath, kubeConfig.exportConfig(), { mode: 0o600 });
  const kubectl = async (...args: string[]) => {
    try {
      return (await run("kubectl", ["--kubeconfig", kubeconfigPath, ...args])).stdout;
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr ?? "";
      throw new Error(`kubectl ${args.join(" ")}: ${stderr || String(error)}`);
    }
  };
  return Object.assign(kubectl, { kubeconfigPath });
}
