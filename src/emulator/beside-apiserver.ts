// The emulator as KubeVirt and the node beside a real API server (`npm run emulator -- --apiserver
// KUBECONFIG`): the objects live in that server; the emulator's controllers work on a copy of them
// (remote/remote-mirror.ts) and run the guests, as virt-controller, virt-handler and the kubelet do;
// it serves subresources.kubevirt.io to that server as virt-api does (aggregation/), and the nodes'
// pod logs as their kubelet does (kubelet/).
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import { Registry } from "./apiserver/registry.ts";
import { ObjectStore } from "./apiserver/store.ts";
import { parseClusterConfig, type ClusterConfigInput } from "./cluster/cluster-config.ts";
import { timingsFor, type TimingMode } from "./cluster/timing.ts";
import {
  registerSubresourcesApiService,
  unregisterSubresourcesApiService,
} from "./aggregation/api-service-registration.ts";
import { startSubresourcesServer, type SubresourcesServer } from "./aggregation/subresources-server.ts";
import { startKubevirtNode, type GuestsChoice } from "./kubevirt-node.ts";
import { createKubevirtSubresources } from "./subresources/routes.ts";
import { startKubeletServer } from "./kubelet/kubelet-server.ts";
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
  /** Where the subresources server listens for kube-apiserver; default 127.0.0.1 and any free port. */
  host?: string;
  port?: number;
  log?: (line: string) => void;
}

export interface BesideApiServer {
  /** The aggregated server kube-apiserver proxies subresources.kubevirt.io to. */
  subresources: SubresourcesServer;
  close(): Promise<void>;
}

/** The CA the kubeconfig trusts the server with: the cluster's, which signs its kubelet client certificate. */
function clusterCaOf(kubeConfig: KubeConfig): string {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster?.caData) return Buffer.from(cluster.caData, "base64").toString();
  if (cluster?.caFile) return readFileSync(cluster.caFile, "utf8");
  throw new Error("the API server's kubeconfig names no certificate authority for its cluster");
}

export async function startBesideApiServer(options: BesideApiServerOptions): Promise<BesideApiServer> {
  const log = options.log ?? ((line: string) => console.log(`emulator: ${line}`));
  const config = parseClusterConfig(options.cluster);
  const stateDir = resolve(options.stateDir ?? ".lab/emulator");
  const registry = new Registry(new ObjectStore(1000));
  const mirror = new RemoteMirror({ store: registry.store, api: new RemoteApi(options.kubeConfig), log });
  const stops: (() => Promise<void>)[] = [() => mirror.stop()];
  let stopping: Promise<void> | undefined;
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const stop of stops.splice(0).reverse()) await stop();
    })());
  try {
    await mirror.start();
    const node = await startKubevirtNode({
      registry,
      config,
      timings: timingsFor(options.timing ?? "realistic"),
      stateDir,
      guests: options.guests ?? "sandbox",
      unlimitedGuests: options.unlimitedGuests === true,
      kubeconfigPaths: [options.kubeconfigPath],
    });
    stops.push(() => node.stop());
    const host = options.host ?? "127.0.0.1";
    const kubelet = await startKubeletServer({
      registry,
      guests: node.guests,
      clusterCaPem: clusterCaOf(options.kubeConfig),
      host,
    });
    stops.push(() => kubelet.close());
    seedCluster(registry, config, { address: host, port: kubelet.port });
    const subresources = await startSubresourcesServer({
      kubeConfig: options.kubeConfig,
      host,
      ...(options.port ? { port: options.port } : {}),
      subresources: createKubevirtSubresources({
        config,
        registry,
        guests: node.guests,
        pauses: node.pauses,
        upgrades: node.upgrades,
      }),
    });
    stops.push(() => subresources.close());
    // Gone with the server behind them: an APIService left unavailable holds up discovery and
    // namespace deletion wherever a namespace controller runs.
    stops.push(() => unregisterSubresourcesApiService(options.kubeConfig).catch(() => undefined));
    await registerSubresourcesApiService(options.kubeConfig, {
      host: subresources.host,
      port: subresources.port,
      caBundlePem: subresources.caBundlePem,
    });
    return { subresources, close: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
