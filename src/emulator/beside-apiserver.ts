// The emulator as KubeVirt and the node beside a real API server (`npm run emulator -- --apiserver
// KUBECONFIG`): the objects live in that server; the emulator's controllers work on a copy of them
// (remote/remote-mirror.ts) and run the guests, as virt-controller, virt-handler and the kubelet do.
import { resolve } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import { Registry } from "./apiserver/registry.ts";
import { ObjectStore } from "./apiserver/store.ts";
import { parseClusterConfig, type ClusterConfigInput } from "./cluster/cluster-config.ts";
import { timingsFor, type TimingMode } from "./cluster/timing.ts";
import { startKubevirtNode, type GuestsChoice, type KubevirtNode } from "./kubevirt-node.ts";
import { RemoteApi } from "./remote/remote-api.ts";
import { RemoteMirror } from "./remote/remote-mirror.ts";
import { seedCluster } from "./seed.ts";

export interface BesideApiServerOptions {
  /** Credentials for the real API server, with the rights KubeVirt's components have there. */
  kubeConfig: KubeConfig;
  /** The kubeconfig's path, kept out of sandboxed guests' sight. */
  kubeconfigPath: string;
  stateDir?: string;
  timing?: TimingMode;
  cluster?: ClusterConfigInput;
  guests?: GuestsChoice;
  unlimitedGuests?: boolean;
  log?: (line: string) => void;
}

export interface BesideApiServer {
  node: KubevirtNode;
  registry: Registry;
  /** Resolves once every change the controllers made so far has reached the API server. */
  flushed(): Promise<void>;
  close(): Promise<void>;
}

export async function startBesideApiServer(options: BesideApiServerOptions): Promise<BesideApiServer> {
  const log = options.log ?? ((line: string) => console.log(`emulator: ${line}`));
  const config = parseClusterConfig(options.cluster);
  const stateDir = resolve(options.stateDir ?? ".lab/emulator");
  const registry = new Registry(new ObjectStore(1000));
  const mirror = new RemoteMirror({ store: registry.store, api: new RemoteApi(options.kubeConfig), log });
  await mirror.start();
  let node: KubevirtNode;
  try {
    node = await startKubevirtNode({
      registry,
      config,
      timings: timingsFor(options.timing ?? "realistic"),
      stateDir,
      guests: options.guests ?? "sandbox",
      unlimitedGuests: options.unlimitedGuests === true,
      kubeconfigPaths: [options.kubeconfigPath],
    });
  } catch (error) {
    await mirror.stop();
    throw error;
  }
  seedCluster(registry, config);
  return {
    node,
    registry,
    flushed: () => mirror.flushed(),
    async close() {
      await node.stop();
      await mirror.stop();
    },
  };
}
