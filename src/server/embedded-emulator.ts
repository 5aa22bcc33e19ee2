// Runs the KubeVirt emulator as a child process when no cluster is configured. The server talks to
// it like to any cluster: through the kubeconfig it writes, never by importing its code. The emulator
// enforces deploy/base's RBAC and writes a kubeconfig for the console's service account, so a local
// BFF has exactly the permissions a deployed one has; the admin kubeconfig is for people (kubectl).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { Config, EmulatorTiming } from "./config.ts";
import { projectRoot } from "./project-root.ts";

export interface EmbeddedEmulator {
  /** The admin's kubeconfig. */
  kubeconfigPath: string;
  /** The kubeconfig of the console's service account (lab-console/lab-console), for the BFF. */
  consoleKubeconfigPath: string;
  stop(): Promise<void>;
}

/**
 * The emulator's program beside this one: the compiled dist/emulator/main.js when this BFF is the
 * compiled one, src/emulator/main.ts through tsx when it runs from source (dev and tests).
 */
const fromSource = import.meta.url.endsWith(".ts");
const emulatorProgram = [
  ...(fromSource ? ["--import", "tsx"] : []),
  fileURLToPath(new URL(`../emulator/main.${fromSource ? "ts" : "js"}`, import.meta.url)),
];

/** deploy/base/serviceaccount.yaml. */
const consoleServiceAccount = "lab-console/lab-console";

/** Where the service account's kubeconfig goes: beside the admin's. */
export function consoleKubeconfigPathFor(kubeconfigPath: string): string {
  return path.join(path.dirname(kubeconfigPath), "lab-console.kubeconfig");
}

export interface EmbeddedEmulatorOptions {
  projectRoot: string;
  kubeconfigPath: string;
  timing: EmulatorTiming;
  /** Where the emulator's own output goes, line by line. */
  log: { info(message: string): void };
  readyWithinMs?: number;
  /** What runs in the VMs (LAB_EMULATOR_GUESTS); benches use "none": no process behind a VM. */
  guests?: "sandbox" | "qemu" | "none";
  /** Benches only: a cluster file (nodes, versions). */
  clusterConfigFile?: string;
}

/** The emulator a configuration without a cluster asks for, its output at the configured level. */
export function startEmbeddedEmulatorFor(
  cluster: Extract<Config["cluster"], { kind: "embedded-emulator" }>,
  log: { info(message: string): void },
): Promise<EmbeddedEmulator> {
  console.log(
    "No cluster configured (LAB_KUBECONFIG, KUBECONFIG): starting the embedded KubeVirt emulator...",
  );
  return startEmbeddedEmulator({
    projectRoot,
    kubeconfigPath: cluster.kubeconfigPath,
    timing: cluster.timing,
    guests: cluster.guests,
    log,
  });
}

export async function startEmbeddedEmulator(options: EmbeddedEmulatorOptions): Promise<EmbeddedEmulator> {
  const { projectRoot, kubeconfigPath, timing, log } = options;
  const consoleKubeconfigPath = consoleKubeconfigPathFor(kubeconfigPath);
  // Its CA key and admin token go beside the kubeconfig: only our own user may look in (when the
  // folder is ours to create).
  await mkdir(path.dirname(kubeconfigPath), { recursive: true, mode: 0o700 });
  // A kubeconfig left by an earlier run points at a port that is gone: only a new one means ready.
  await rm(kubeconfigPath, { force: true });
  await rm(consoleKubeconfigPath, { force: true });
  const child = spawn(
    process.execPath,
    [
      ...emulatorProgram,
      "--port",
      "0",
      "--kubeconfig",
      kubeconfigPath,
      "--timing",
      timing,
      // Its CA and admin token live beside the kubeconfig, so one DATA_DIR holds all local state.
      "--state-dir",
      path.join(path.dirname(kubeconfigPath), "emulator"),
      "--rbac",
      path.join(projectRoot, "deploy/base"),
      "--service-account-kubeconfig",
      `${consoleServiceAccount}=${consoleKubeconfigPath}`,
      // Our end of its stdin closes however we die, SIGKILL included: it then shuts down by itself.
      "--exit-with-stdin",
      ...(options.guests ? ["--guests", options.guests] : []),
      ...(options.clusterConfigFile ? ["--config", options.clusterConfigFile] : []),
    ],
    // Its own process group: Ctrl-C in the terminal reaches only us, and we stop it after the app,
    // so the app never sees its cluster vanish mid-shutdown.
    { cwd: projectRoot, stdio: ["pipe", "pipe", "pipe"], detached: true },
  );
  const recentOutput: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => {
      recentOutput.push(line);
      if (recentOutput.length > 20) recentOutput.shift();
      // Its warnings name it already, as they must when it runs on its own.
      log.info(`emulator: ${line.replace(/^emulator: /, "")}`);
    });
  }
  // Last resort if this process dies without a clean shutdown: never leave an orphaned emulator.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const stop = async () => {
    process.removeListener("exit", killOnExit);
    await stopChild(child);
  };

  try {
    await waitUntilAnswering(child, consoleKubeconfigPath, options.readyWithinMs ?? 30_000);
  } catch (error) {
    await stop();
    const output = recentOutput.length > 0 ? `\nIts last output:\n${recentOutput.join("\n")}` : "";
    throw new Error(`${(error as Error).message}${output}`);
  }
  return { kubeconfigPath, consoleKubeconfigPath, stop };
}

async function waitUntilAnswering(
  child: ChildProcess,
  kubeconfigPath: string,
  withinMs: number,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  let closed = false;
  child.once("close", () => (closed = true));
  // The cluster client is most of the BFF's code: loading it here lets the emulator start meanwhile.
  const [{ createClusterClient, loadKubeConfig }, { KubeRequestCounter }] = await Promise.all([
    import("./kube/client.ts"),
    import("./kube/request-counter.ts"),
  ]);
  let lastProblem = "it wrote no kubeconfig";
  while (Date.now() < deadline) {
    // "close", not "exit": it comes after the output is drained, so the error can show all of it.
    if (closed) {
      throw new Error(
        `The embedded emulator exited (${child.exitCode ?? child.signalCode}) before it was ready.`,
      );
    }
    if (existsSync(kubeconfigPath)) {
      try {
        const kubeConfig = loadKubeConfig({ kind: "kubeconfig", path: kubeconfigPath });
        const probe = createClusterClient(kubeConfig, {
          namespace: "default",
          labelSelector: "",
          counter: new KubeRequestCounter(),
        });
        await probe.serverVersion();
        return;
      } catch (error) {
        lastProblem = (error as Error).message;
      }
    }
    // Often: the check is one stat until the kubeconfig is there, and every step here delays the start.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(
    `The embedded emulator did not answer within ${Math.round(withinMs / 1000)} s (${lastProblem}).`,
  );
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const forceTimer = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(forceTimer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
