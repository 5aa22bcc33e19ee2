// What the benches share on the cluster side: an embedded emulator (a process of its own, as with
// `npm start`) with a client for it, a lab to launch, and sessions launched as the BFF launches them.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import type WebSocket from "ws";
import type { Lab } from "../../src/common/lab.ts";
import {
  startEmbeddedEmulator,
  type EmbeddedEmulator,
  type EmbeddedEmulatorOptions,
} from "../../src/server/embedded-emulator.ts";
import { createAgentDelivery } from "../../src/server/agent/delivery.ts";
import { loadAgentFile } from "../../src/server/agent/agent-file.ts";
import { agentKey } from "../../src/server/agent/key.ts";
import { createClusterClient, loadKubeConfig, type ClusterClient } from "../../src/server/kube/client.ts";
import { KubeRequestCounter } from "../../src/server/kube/request-counter.ts";
import { openVmiWebSocket } from "../../src/server/kube/vmi-websocket.ts";
import { sessionsSelector } from "../../src/server/sessions/labels.ts";
import { createSessionVm } from "../../src/server/sessions/vm-creation.ts";
import { buildSessionObjects, newSessionId } from "../../src/server/sessions/vm-manifest.ts";

export const projectRoot = path.resolve(import.meta.dirname, "../..");
export const benchNamespace = "lab-sessions";

/** A small lab with nothing of its own in the guest: benches measure our layers, not a lab's setup. */
export const benchLab: Lab = {
  id: "linux-basics",
  title: "Linux basics",
  description: "",
  vm: { cpu: 1, memory: "1Gi", image: "quay.io/containerdisks/fedora:41", nested: false, cloudInit: null },
  session: { minutes: 60, extendMinutes: 15, maxExtensions: 2, terminals: 0, consoles: ["serial"] },
  checks: [],
};

export interface BenchCluster {
  /** A fresh temporary directory for this run's files (kubeconfig, the BFF's data). */
  stateDir: string;
  emulator: EmbeddedEmulator;
  /** The administrator's credentials, for clients of a bench's own. */
  kubeConfig: KubeConfig;
  /** The emulator as its administrator sees it. */
  cluster: ClusterClient;
}

/** The emulator (fast timing unless asked), in a fresh state directory named after the bench. */
export async function startBenchCluster(
  name: string,
  options: Pick<EmbeddedEmulatorOptions, "guests"> & {
    timing?: EmbeddedEmulatorOptions["timing"];
    clusterYaml?: string;
  } = {},
): Promise<BenchCluster> {
  const stateDir = await mkdtemp(path.join(tmpdir(), `lab-bench-${name}-`));
  const clusterConfigFile =
    options.clusterYaml === undefined ? undefined : path.join(stateDir, "cluster.yaml");
  if (clusterConfigFile) await writeFile(clusterConfigFile, options.clusterYaml ?? "");
  const emulator = await startEmbeddedEmulator({
    projectRoot,
    kubeconfigPath: path.join(stateDir, "kubeconfig"),
    timing: options.timing ?? "fast",
    guests: options.guests,
    clusterConfigFile,
    log: { info() {} },
  });
  const kubeConfig = loadKubeConfig({ kind: "kubeconfig", path: emulator.kubeconfigPath });
  const cluster = createClusterClient(kubeConfig, {
    namespace: benchNamespace,
    labelSelector: sessionsSelector,
    counter: new KubeRequestCounter(),
  });
  return { stateDir, emulator, kubeConfig, cluster };
}

/** A session's VM and its user data, created as the BFF's launch creates them. */
export async function launchSession(
  cluster: ClusterClient,
  session: { sessionId: string; lab: Lab; owner: string; agentUserData?: string },
): Promise<void> {
  await createSessionVm(
    cluster,
    buildSessionObjects({
      ...session,
      namespace: benchNamespace,
      expiresAt: new Date(Date.now() + 3600_000),
    }),
  );
}

/** A session VM that never boots (Halted): a session to list and poll, not a guest to run. */
export async function createHaltedSession(cluster: ClusterClient, lab: Lab, owner: string): Promise<string> {
  const sessionId = newSessionId(lab.id);
  const { virtualMachine } = buildSessionObjects({
    sessionId,
    lab,
    owner,
    namespace: benchNamespace,
    expiresAt: new Date(Date.now() + 3600_000),
  });
  virtualMachine.spec.runStrategy = "Halted";
  await cluster.createVirtualMachine(virtualMachine);
  return sessionId;
}

/** One session of the bench lab per owner, all Running; returns their ids. */
export async function launchRunningSessions(
  cluster: ClusterClient,
  owners: readonly string[],
  /** The BFF's AGENT_TOKEN_SECRET, to give each VM the grading agent as the BFF's launch does. */
  agentSecret?: string,
): Promise<string[]> {
  const delivery = agentSecret
    ? createAgentDelivery(await loadAgentFile(), (id) => agentKey(agentSecret, id))
    : undefined;
  const ids: string[] = [];
  for (const owner of owners) {
    const sessionId = newSessionId(benchLab.id);
    await launchSession(cluster, { sessionId, lab: benchLab, owner, agentUserData: delivery?.(sessionId) });
    ids.push(sessionId);
  }
  await waitUntilRunning(cluster, ids);
  return ids;
}

/** Resolves once every one of these VMs has a Running VMI. */
export async function waitUntilRunning(
  cluster: ClusterClient,
  sessionIds: readonly string[],
  timeoutMs = 10 * 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const running = new Set(
      (await cluster.virtualMachineInstances.list()).items
        .filter((vmi) => vmi.status?.phase === "Running")
        .map((vmi) => vmi.metadata.name),
    );
    if (sessionIds.every((id) => running.has(id))) return;
    if (Date.now() > deadline) {
      throw new Error(`Not all ${sessionIds.length} VMs reached Running within ${timeoutMs / 1000} s.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * A VMI's serial console straight from the emulator's subresource, with the kubeconfig's
 * credentials, as virtctl (and the BFF) open it: TLS, no compression.
 */
export function openBenchConsole(kubeConfig: KubeConfig, vmiName: string): Promise<WebSocket> {
  return openVmiWebSocket({
    kubeConfig,
    namespace: benchNamespace,
    vmiName,
    subresource: "console",
    options: { perMessageDeflate: false },
    signal: AbortSignal.timeout(10_000),
  });
}
