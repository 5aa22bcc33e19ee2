// Starts an emulator for tests: fast timing, port 0, a throwaway state directory, no guests unless
// asked for (guests: "sandbox"), and a @kubernetes/client-node KubeConfig that trusts its CA. With
// deployRbac it enforces the RBAC that deploy/base ships and hands out the BFF's service account.
// Other parts' integration tests use it too.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KubeConfig } from "@kubernetes/client-node";
import { patient } from "../../common/testing/patience.ts";
import { loadOrCreateServingMaterial } from "../cluster/tls.ts";
import { createEmulator, type Emulator, type EmulatorOptions } from "../emulator.ts";

/** The BFF's identity in deploy/base (serviceaccount.yaml). */
export const bffServiceAccount = { namespace: "lab-console", name: "lab-console" };
export const deployBaseDir = fileURLToPath(new URL("../../../deploy/base", import.meta.url));

export interface TestEmulatorOptions extends EmulatorOptions {
  /** Enforce deploy/base's RBAC (plus the cluster defaults) and write a kubeconfig for the BFF's service account. */
  deployRbac?: boolean;
}

export interface TestEmulator {
  emulator: Emulator;
  /** Points at the emulator as the admin user. */
  kubeConfig: KubeConfig;
  /** Points at the emulator as the BFF's service account; only with deployRbac. */
  bffKubeConfig(): KubeConfig;
  /** The kubeconfig file behind bffKubeConfig(), e.g. for a BFF started as its own process. */
  bffKubeconfigPath(): string;
  /** Temporary directory holding the kubeconfig and state; removed by close(). */
  dir: string;
  close(): Promise<void>;
}

let sharedTlsFiles: Map<string, string> | undefined;

// Generating the RSA keys costs a third of a second; tests in one process share one CA and
// certificate, kept in memory and written into each emulator's own state directory.
function writeSharedTlsState(stateDir: string): void {
  if (!sharedTlsFiles) {
    const scratch = mkdtempSync(join(tmpdir(), "lab-emulator-tls-"));
    try {
      loadOrCreateServingMaterial(scratch, "127.0.0.1");
      sharedTlsFiles = new Map(
        readdirSync(scratch).map((file) => [file, readFileSync(join(scratch, file), "utf8")]),
      );
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  for (const [file, content] of sharedTlsFiles) writeFileSync(join(stateDir, file), content, { mode: 0o600 });
}

export async function startTestEmulator(options: TestEmulatorOptions = {}): Promise<TestEmulator> {
  const { deployRbac = false, ...emulatorOptions } = options;
  const dir = mkdtempSync(join(tmpdir(), "lab-emulator-"));
  if (!options.stateDir && (options.host ?? "127.0.0.1") === "127.0.0.1")
    writeSharedTlsState(join(dir, "state"));
  const bffKubeconfigPath = join(dir, "bff-kubeconfig");
  const emulator = await createEmulator({
    port: 0,
    timing: "fast",
    stateDir: join(dir, "state"),
    kubeconfigPath: join(dir, "kubeconfig"),
    guests: "none",
    ...(deployRbac
      ? {
          rbacFiles: [deployBaseDir],
          serviceAccountKubeconfigs: [{ ...bffServiceAccount, path: bffKubeconfigPath }],
        }
      : {}),
    ...emulatorOptions,
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(emulator.kubeconfigPath);
  return {
    emulator,
    kubeConfig,
    bffKubeConfig: () => {
      const config = new KubeConfig();
      config.loadFromFile(requireDeployRbac(deployRbac, bffKubeconfigPath));
      return config;
    },
    bffKubeconfigPath: () => requireDeployRbac(deployRbac, bffKubeconfigPath),
    dir,
    close: async () => {
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function requireDeployRbac(deployRbac: boolean, path: string): string {
  if (!deployRbac) throw new Error("start the test emulator with deployRbac: true for the BFF's kubeconfig");
  return path;
}

/** A KubeConfig for the same emulator with another bearer token (a user from EmulatorOptions.tokens). */
export function kubeConfigWithToken(base: KubeConfig, token: string): KubeConfig {
  const config = new KubeConfig();
  const cluster = base.getCurrentCluster();
  if (!cluster) throw new Error("the base kubeconfig has no current cluster");
  config.loadFromOptions({
    clusters: [cluster],
    users: [{ name: "test-user", token }],
    contexts: [{ name: "test", cluster: cluster.name, user: "test-user" }],
    currentContext: "test",
  });
  return config;
}

/** Polls until `check` returns a value other than undefined, or fails after the deadline. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  { timeoutMs = 5000, intervalMs = 10, what = "condition" } = {},
): Promise<T> {
  const deadline = Date.now() + patient(timeoutMs);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
