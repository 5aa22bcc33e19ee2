// createEmulator wires the parts into one running cluster: TLS material, tokens and RBAC, the object
// store with its registry and watch hub, the emulated controllers, the guests and KubeVirt's streams,
// the seeded cluster objects, fault injection and the HTTPS server. It writes a kubeconfig that points
// at it (and one per requested service account).
import { createServer } from "node:https";
import type { Socket } from "node:net";
import { resolve } from "node:path";
import { ownerReferencesPlugin } from "./apiserver/admission/owner-reference-admission.ts";
import { createApiServer } from "./apiserver.ts";
import {
  adminUser,
  loadOrCreateAdminToken,
  TokenAuthenticator,
  type TokenEntry,
} from "./apiserver/authentication.ts";
import { createOpenApiDocuments } from "./apiserver/openapi/openapi.ts";
import { Registry } from "./apiserver/registry.ts";
import { RestHandler } from "./apiserver/rest.ts";
import {
  serviceAccountTokens,
  writeServiceAccountKubeconfig,
  type ServiceAccountKubeconfig,
} from "./apiserver/service-accounts.ts";
import { ObjectStore } from "./apiserver/store.ts";
import { apiServerWatchTiming, WatchHub, type WatchTiming } from "./apiserver/watch.ts";
import { parseClusterConfig, type ClusterConfigInput } from "./cluster/cluster-config.ts";
import { seedCluster } from "./seed.ts";
import { renderKubeconfig, writeKubeconfig } from "./cluster/kubeconfig.ts";
import { loadOrCreateServingMaterial } from "./cluster/tls.ts";
import { startNamespaceController } from "./controller/namespace-controller.ts";
import { timingsFor, type TimingMode, type Timings } from "./cluster/timing.ts";
import { createFaultApi } from "./faults/fault-api.ts";
import { createFaults, type EmulatorFaults } from "./faults/faults.ts";
import { withFaults } from "./faults/front-door.ts";
import { RequestFaults } from "./faults/request-faults.ts";
import { Connections, type ConnectionStats } from "./http/connections.ts";
import { listen } from "./http/listen.ts";
import { normalizePathPrefix, withPathPrefix } from "./http/path-prefix.ts";
import type { Authorizer } from "./rbac/attributes.ts";
import { clusterDefaultsFile, createRbacAuthorizer, loadRbacFiles } from "./rbac/rbac.ts";
import type { PortForwardKeepAlive } from "./subresources/portforward.ts";
import { startKubevirtNode, type GuestsChoice } from "./kubevirt-node.ts";

export interface EmulatorOptions {
  host?: string;
  /** 0 = any free port. */
  port?: number;
  kubeconfigPath?: string;
  /** Where the CA, serving certificate and admin token are kept and reused. */
  stateDir?: string;
  timing?: TimingMode;
  /** Changes to the timing mode's steps, e.g. `toRuncmd` for a test of a slowly booting guest. */
  timings?: Partial<Timings>;
  /** Versions, gates, nodes and guest images; anything left out takes its default. */
  cluster?: ClusterConfigInput;
  /** Default: every authenticated token may do everything. Not together with rbacFiles. */
  authorizer?: Authorizer;
  /**
   * Enforce Kubernetes RBAC read from these YAML files or folders (Role, ClusterRole and bindings;
   * other kinds are skipped), on top of the cluster's defaults (rbac/cluster-defaults.yaml).
   */
  rbacFiles?: string[];
  /** Extra bearer tokens, e.g. for RBAC tests. */
  tokens?: TokenEntry[];
  /** Mint a token for each service account and write a kubeconfig that uses it. */
  serviceAccountKubeconfigs?: ServiceAccountKubeconfig[];
  /**
   * What runs inside Running VMIs: "sandbox" (default) a bash per VMI in a sandbox under
   * `<stateDir>/guests`, "qemu" a Debian guest under QEMU per VMI (qemu/qemu-guests.ts), "none"
   * nothing (no console), or a runtime of your own.
   */
  guests?: GuestsChoice;
  /**
   * Start guests even where the host gives them no cgroup limits (npm run emulator reads
   * LAB_EMULATOR_UNLIMITED_GUESTS=1): only for guests you trust. Otherwise their VMIs fail there.
   */
  unlimitedGuests?: boolean;
  /** Serve the fault API under /emulator/faults/ (admin token only). The returned handle always works. */
  faults?: boolean;
  /** Port-forward pings and pong timeout; default KubeVirt's 1 s and 60 s. */
  portForwardKeepAlive?: PortForwardKeepAlive;
  /** Watch events kept per kind for resuming watches (older resourceVersions get 410). */
  watchHistorySize?: number;
  /** Bookmarks and watch timeouts; default the API server's (a minute; 30 to 60 minutes). */
  watchTiming?: Partial<WatchTiming>;
  /**
   * Serve everything only below this path, e.g. "/k8s/clusters/c-1", as behind Rancher's cluster
   * proxy or an API gateway that strips it; requests without it get 404. The URL and the kubeconfigs
   * carry it.
   */
  pathPrefix?: string;
}

export interface Emulator {
  /** The server URL clients use (the kubeconfigs' `server`), path prefix included. */
  url: string;
  kubeconfigPath: string;
  adminToken: string;
  /** Fault injection for tests (in-process, whether or not the HTTP fault API is on). */
  faults: EmulatorFaults;
  /** The API server's TCP connections, for tests of how clients reuse them. */
  connectionStats(): ConnectionStats;
  /** Stops serving, kills every guest. */
  close(): Promise<void>;
}

const defaultKubeconfigPath = ".lab/kubeconfig";
const allowAll: Authorizer = { authorize: () => ({ allowed: true, reason: "" }) };

function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

function authorizerFor(options: EmulatorOptions): Authorizer {
  if (options.rbacFiles === undefined) return options.authorizer ?? allowAll;
  if (options.authorizer) throw new Error("give the emulator either an authorizer or rbacFiles, not both");
  const policy = loadRbacFiles([clusterDefaultsFile, ...options.rbacFiles]);
  for (const note of policy.notes) console.warn(`emulator: ${note}`);
  return createRbacAuthorizer(policy, { superUsers: [adminUser.username] });
}

export async function createEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const host = options.host ?? "127.0.0.1";
  const stateDir = resolve(options.stateDir ?? ".lab/emulator");
  const kubeconfigPath = resolve(options.kubeconfigPath ?? defaultKubeconfigPath);
  const config = parseClusterConfig(options.cluster);
  const pathPrefix = normalizePathPrefix(options.pathPrefix);
  const authorizer = authorizerFor(options);
  const tls = loadOrCreateServingMaterial(stateDir, host);
  const adminToken = loadOrCreateAdminToken(stateDir);
  const serviceAccounts = options.serviceAccountKubeconfigs ?? [];
  const serviceAccountEntries = serviceAccountTokens(stateDir, serviceAccounts);
  const authenticator = new TokenAuthenticator([
    { token: adminToken, ...adminUser },
    ...(options.tokens ?? []),
    ...serviceAccountEntries,
  ]);

  const store = new ObjectStore(options.watchHistorySize ?? 1000);
  const registry = new Registry(store);
  const watches = new WatchHub(store, { ...apiServerWatchTiming, ...options.watchTiming });
  const stopNamespaceController = startNamespaceController(registry);
  const timings = timingsFor(options.timing ?? "realistic", options.timings);
  const node = await startKubevirtNode({
    registry,
    config,
    timings,
    stateDir,
    guests: options.guests ?? "sandbox",
    unlimitedGuests: options.unlimitedGuests === true,
    kubeconfigPaths: [kubeconfigPath, ...serviceAccounts.map((account) => account.path)],
    ...(options.portForwardKeepAlive ? { portForwardKeepAlive: options.portForwardKeepAlive } : {}),
  });
  const { guests, consoles, pauses, upgrades } = node;
  seedCluster(registry, config);

  let port = options.port ?? 8443;
  // The cluster's own validating webhooks: configured, and added by the refuseWrites fault.
  const policyWebhooks = [...config.policyWebhooks];
  const api = createApiServer({
    config,
    authenticator,
    authorizer,
    registry,
    rest: new RestHandler({
      registry,
      watches,
      policyWebhooks,
      ...(config.kubernetes.disableAdmissionPlugins.includes(ownerReferencesPlugin)
        ? {}
        : { ownerReferenceAuthorizer: authorizer }),
    }),
    openapi: createOpenApiDocuments(config.kubernetes.version),
    upgrades,
    guests,
    serverAddress: () => `${urlHost(host)}:${port}`,
    pauses,
  });
  const server = createServer({ key: tls.keyPem, cert: tls.certPem });
  const connections = new Connections(server);
  const requestFaults = new RequestFaults();
  const faults = createFaults({
    watches,
    store,
    connections,
    requests: requestFaults,
    registry,
    guests,
    consoles,
    policyWebhooks,
  });
  const faultApi = options.faults
    ? createFaultApi({
        faults,
        connections,
        authenticator,
        isAdmin: (user) => user.username === adminUser.username,
      })
    : undefined;
  // The prefix is outermost, as the proxy that strips it stands in front of the whole API server.
  const front = withPathPrefix(withFaults(api, requestFaults, faultApi), pathPrefix);
  server.on("request", front.onRequest);
  server.on("upgrade", front.onUpgrade);
  // Malformed HTTP gets a 400 instead of an unhandled error.
  server.on("clientError", (_error, socket: Socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  const stopControllers = async () => {
    stopNamespaceController();
    watches.closeAll();
    await node.stop();
  };
  try {
    port = await listen(server, port, host);
  } catch (error) {
    await stopControllers();
    throw error;
  }

  const url = `https://${urlHost(host)}:${port}${pathPrefix}`;
  writeKubeconfig(
    kubeconfigPath,
    renderKubeconfig({ server: url, caCertPem: tls.caCertPem, token: adminToken }),
  );
  serviceAccounts.forEach((account, index) =>
    writeServiceAccountKubeconfig(account, serviceAccountEntries[index]?.token ?? "", {
      server: url,
      caCertPem: tls.caCertPem,
    }),
  );

  let closing: Promise<void> | undefined;
  return {
    url,
    kubeconfigPath,
    adminToken,
    faults,
    connectionStats: () => connections.stats(),
    close: () => {
      closing ??= (async () => {
        const serverClosed = new Promise<void>((resolveClose) => server.close(() => resolveClose()));
        connections.closeAll();
        await Promise.all([serverClosed, stopControllers()]);
      })();
      return closing;
    },
  };
}
