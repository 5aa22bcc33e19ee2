// createEmulator wires the parts into one running cluster: TLS material, tokens, the object store
// with its registry and watch hub, the emulated controllers, the seeded cluster objects and the
// HTTPS server. It writes a kubeconfig that points at it.
import { createServer, type Server } from "node:https";
import type { Socket } from "node:net";
import { resolve } from "node:path";
import { createApiServer } from "./apiserver.ts";
import { adminUser, loadOrCreateAdminToken, TokenAuthenticator, type TokenEntry } from "./authentication.ts";
import { parseClusterConfig, type ClusterConfigInput } from "./cluster-config.ts";
import { seedCluster } from "./cluster.ts";
import { EventRecorder } from "./controller/events.ts";
import { startGarbageCollector } from "./controller/garbage-collector.ts";
import { startNamespaceController } from "./controller/namespace-controller.ts";
import { timingsFor, type TimingMode } from "./controller/timing.ts";
import { VmController } from "./controller/vm-controller.ts";
import { VmiLifecycle } from "./controller/vmi-lifecycle.ts";
import { noGuests, type GuestRuntime } from "./guest-runtime.ts";
import { UpgradeRoutes } from "./http/upgrade.ts";
import { renderKubeconfig, writeKubeconfig } from "./kubeconfig.ts";
import { createOpenApiDocuments } from "./openapi.ts";
import type { Authorizer } from "./rbac/attributes.ts";
import { Registry } from "./registry.ts";
import { RestHandler } from "./rest.ts";
import { ObjectStore } from "./store.ts";
import { loadOrCreateServingMaterial } from "./tls.ts";
import { WatchHub } from "./watch.ts";

export interface EmulatorOptions {
  host?: string;
  /** 0 = any free port. */
  port?: number;
  kubeconfigPath?: string;
  /** Where the CA, serving certificate and admin token are kept and reused. */
  stateDir?: string;
  timing?: TimingMode;
  /** Versions, gates and nodes; anything left out takes its default. */
  cluster?: ClusterConfigInput;
  /** Default: every authenticated token may do everything. */
  authorizer?: Authorizer;
  /** Extra bearer tokens, e.g. for RBAC tests. */
  tokens?: TokenEntry[];
  /** What runs guests when VMIs start; default none. */
  guests?: GuestRuntime;
  /** Watch events kept per kind for resuming watches (older resourceVersions get 410). */
  watchHistorySize?: number;
  /** How often watches with allowWatchBookmarks get a BOOKMARK. */
  bookmarkIntervalMs?: number;
}

export interface Emulator {
  url: string;
  kubeconfigPath: string;
  adminToken: string;
  close(): Promise<void>;
}

const allowAll: Authorizer = { authorize: () => ({ allowed: true, reason: "" }) };

function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address();
      resolveListen(typeof address === "object" && address ? address.port : port);
    });
  });
}

export async function createEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const host = options.host ?? "127.0.0.1";
  const stateDir = resolve(options.stateDir ?? ".lab/emulator");
  const kubeconfigPath = resolve(options.kubeconfigPath ?? ".lab/kubeconfig");
  const config = parseClusterConfig(options.cluster);
  const tls = loadOrCreateServingMaterial(stateDir, host);
  const adminToken = loadOrCreateAdminToken(stateDir);
  const authenticator = new TokenAuthenticator([
    { token: adminToken, ...adminUser },
    ...(options.tokens ?? []),
  ]);

  const store = new ObjectStore(options.watchHistorySize ?? 1000);
  const registry = new Registry(store);
  const watches = new WatchHub(store, options.bookmarkIntervalMs ?? 60_000);
  const recorder = new EventRecorder(registry);
  const stopGarbageCollector = startGarbageCollector(registry);
  const stopNamespaceController = startNamespaceController(registry);
  const vmController = new VmController(registry, recorder);
  const lifecycle = new VmiLifecycle(registry, recorder, {
    timings: timingsFor(options.timing ?? "realistic"),
    guests: options.guests ?? noGuests,
    kubevirtVersion: config.kubevirt.version,
  });
  seedCluster(registry, config);

  let port = options.port ?? 8443;
  const api = createApiServer({
    config,
    authenticator,
    authorizer: options.authorizer ?? allowAll,
    registry,
    rest: new RestHandler({ registry, watches }),
    openapi: createOpenApiDocuments(config.kubernetes.version),
    upgrades: new UpgradeRoutes(),
    serverAddress: () => `${urlHost(host)}:${port}`,
  });
  const server = createServer({ key: tls.keyPem, cert: tls.certPem }, api.onRequest);
  server.on("upgrade", api.onUpgrade);
  // Every TCP connection, including ones still in the TLS handshake or upgraded to websockets, so
  // close() (and later fault injection) can drop them all.
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  // Malformed HTTP gets a 400 instead of an unhandled error.
  server.on("clientError", (_error, socket: Socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  port = await listen(server, port, host);

  const url = `https://${urlHost(host)}:${port}`;
  writeKubeconfig(
    kubeconfigPath,
    renderKubeconfig({ server: url, caCertPem: tls.caCertPem, token: adminToken }),
  );

  let closing: Promise<void> | undefined;
  return {
    url,
    kubeconfigPath,
    adminToken,
    close: () => {
      closing ??= new Promise<void>((resolveClose) => {
        lifecycle.stop();
        vmController.stop();
        stopNamespaceController();
        stopGarbageCollector();
        watches.closeAll();
        server.close(() => resolveClose());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
