// Everything `npm start` and `npm run dev` share: connect to the cluster (or start the embedded
// emulator), load users and labs, build the app and listen.
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.ts";
import { createDemoAuthenticator } from "./auth/authenticator.ts";
import { LiveUsers } from "./auth/live-users.ts";
import { SignIns } from "./auth/sign-ins.ts";
import { createOidcAuthenticator } from "./auth/oidc/oidc-authenticator.ts";
import { loadOrCreateAgentKeySecret, loadOrCreateSessionSecret } from "./auth/secret.ts";
import { demoPassword, type UserRecord } from "./auth/users-file.ts";
import type { Config } from "./config.ts";
import { coordinationFromConfig } from "./replicas/from-config.ts";
import { replicaEndpoint } from "./replicas/identity.ts";
import { openStores, type Stores } from "./open-stores.ts";
import {
  consoleKubeconfigPathFor,
  startEmbeddedEmulatorFor,
  type EmbeddedEmulator,
} from "./embedded-emulator.ts";
import { loadAgentFile } from "./agent/agent-file.ts";
import { createClusterClient, loadKubeConfig } from "./kube/client.ts";
import { createClusterFacts } from "./kube/cluster-facts.ts";
import { KeptAliveKubeConfig } from "./kube/kept-alive.ts";
import { KubeRequestCounter } from "./kube/request-counter.ts";
import { WriteRate } from "./kube/write-rate.ts";
import { formatLabProblem, loadLabs } from "./labs/load-labs.ts";
import { readPlatformsFile } from "./lti/launch/platforms.ts";
import { projectRoot } from "./project-root.ts";
import { sessionsSelector } from "./sessions/labels.ts";
import { startupLog } from "./startup-log.ts";

const webRoot = path.join(projectRoot, "dist/web");

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  close(): Promise<void>;
}

export interface StartOptions {
  /**
   * Serve the SPA that `npm run build` put into dist/web, and refuse to start without it;
   * `npm run dev` and the tests serve none (Vite serves it in dev).
   */
  serveWeb: boolean;
  /**
   * The embedded emulator, already starting for this configuration (`npm start` starts it before it
   * loads this code); without one, a configuration with no cluster starts its own. Stopped with the
   * server either way.
   */
  emulator?: Promise<EmbeddedEmulator>;
}

export async function startServer(config: Config, options: StartOptions): Promise<RunningServer> {
  const log = startupLog(config.logLevel);
  // It starts while the BFF opens its own state; it is awaited only where its kubeconfig is read.
  const emulatorStarting =
    config.cluster.kind === "embedded-emulator"
      ? (options.emulator ?? startEmbeddedEmulatorFor(config.cluster, log))
      : undefined;
  emulatorStarting?.catch(() => {}); // its failure is reported where it is awaited
  let emulator: EmbeddedEmulator | undefined;
  let stores: Stores | undefined;
  let signIns: SignIns | undefined;
  let users: LiveUsers | undefined;
  let kubeConfig: KeptAliveKubeConfig | undefined;
  try {
    if (options.serveWeb && !existsSync(path.join(webRoot, "index.html"))) {
      throw new Error(
        `The web app is not built: ${path.relative(process.cwd(), webRoot) || webRoot} has no index.html (npm run build builds it).`,
      );
    }
    // Databases, recordings and the cookie secret live here: only the BFF's own user may look in
    // (when the folder is ours to create; an operator's folder keeps its mode).
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
    // Demo users exist only in demo mode: with OIDC no users file is read or created. Edits to the
    // file apply without a restart, to sign-ins already made too.
    users = config.authMode === "demo" ? await LiveUsers.open(config.usersFile, { log }) : undefined;
    const { labs, problems } = loadLabs(config.labsDir, config.vmSizes, {
      clusterCidrs: config.clusterCidrs,
    });
    for (const problem of problems) log.warn(`lab skipped: ${formatLabProblem(problem)}`);
    const agentFile = await loadAgentFile();
    stores = await openStores({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      log: { warn: (_details, message) => log.warn(message) },
    });
    // Every sign-out the store keeps is known before the first request is answered.
    signIns = await SignIns.open({ store: stores.endedSignIns, log, standing: users });

    emulator = await emulatorStarting;
    // Even on the embedded emulator the BFF runs as the service account deploy/ ships, with its RBAC.
    kubeConfig = KeptAliveKubeConfig.from(
      loadKubeConfig(
        config.cluster.kind === "embedded-emulator"
          ? { kind: "kubeconfig", path: consoleKubeconfigPathFor(config.cluster.kubeconfigPath) }
          : config.cluster,
      ),
    );
    const kubeRequests = new KubeRequestCounter();
    const writeRate = new WriteRate();
    const cluster = createClusterClient(kubeConfig, {
      namespace: config.namespace,
      labelSelector: sessionsSelector,
      counter: kubeRequests,
      writeRate,
    });
    const app = await buildApp({
      cluster,
      sessionsReadMode: config.sessionsReadMode,
      authenticator: config.oidc
        ? createOidcAuthenticator(config.oidc, { log })
        : await createDemoAuthenticator(users ?? []),
      signIns,
      cookieSecret: await loadOrCreateSessionSecret(config.dataDir, config.sessionSecret),
      labs,
      gradingRepository: stores.grading,
      classRepository: stores.classes,
      announcementRepository: stores.announcements,
      writeRate,
      agentKeySecret: await loadOrCreateAgentKeySecret(config.dataDir, config.agentKeySecret),
      agentFile,
      clusterFacts: createClusterFacts(kubeConfig, kubeRequests),
      kubeRequests,
      auditRepository: stores.audit,
      quotas: config.quotas,
      metricsToken: config.metricsToken,
      coordination: coordinationFromConfig(config.coordination, kubeConfig, kubeRequests),
      allowedOrigins: config.allowedOrigins,
      publicUrl: config.publicUrl,
      trustProxy: config.trustProxy,
      serverLimits: config.serverLimits,
      recordings: { storage: stores.recordings, ...config.recordings },
      webRoot: options.serveWeb ? webRoot : undefined,
      logger: { level: config.logLevel },
      lti: config.lti && {
        platforms: config.lti.platformsFile ? await readPlatformsFile(config.lti.platformsFile) : [],
        dynamicRegistration: config.lti.dynamicRegistration,
        publicUrl: config.lti.publicUrl,
        launchStore: stores.ltiLaunches,
        gradesRepository: stores.ltiGrades,
      },
    });
    await app.listen({ host: config.host, port: config.port });
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
    app.coordination.announce(replicaEndpoint(config.coordination.podIp, config.host, port));

    printBanner({ url, config, users: users?.users ?? [], labCount: labs.length, emulator, stores });
    return {
      url,
      app,
      async close() {
        // The app first: its watches end cleanly before the cluster under them goes away, and no
        // request signs anyone out while the sign-out store closes.
        await app.close();
        kubeConfig?.close();
        await signIns?.close();
        users?.close();
        await stores?.close();
        await emulator?.stop();
      },
    };
  } catch (error) {
    kubeConfig?.close();
    await signIns?.close();
    users?.close();
    await stores?.close();
    emulator ??= await emulatorStarting?.catch(() => undefined);
    await emulator?.stop();
    throw error;
  }
}

function printBanner(input: {
  url: string;
  config: Config;
  users: UserRecord[];
  labCount: number;
  emulator: EmbeddedEmulator | undefined;
  stores: Stores;
}): void {
  const { url, config, users, labCount, emulator, stores } = input;
  const lines = [
    ``,
    `Lab Console: ${url}  (${labCount} labs from ${path.relative(process.cwd(), config.labsDir) || "."})`,
  ];
  if (config.authMode === "demo") {
    const names = users.map((user) => `${user.username} (${user.role})`).join(", ");
    lines.push(
      `Demo sign-in: ${names}; password "${demoPassword}" unless changed in ${relative(config.usersFile)}`,
    );
  }
  if (config.oidc) lines.push(`Sign-in: OpenID Connect at ${config.oidc.issuerUrl.href}`);
  lines.push(`Grading results, audit log and sign-outs: ${stores.description}`);
  if (config.cluster.kind === "kubeconfig")
    lines.push(`Cluster: the one in ${relative(config.cluster.path)}`);
  if (config.cluster.kind === "in-cluster") lines.push(`Cluster: this pod's own, as its service account`);
  if (emulator) {
    lines.push(
      `The VMs it creates: kubectl --kubeconfig ${relative(emulator.kubeconfigPath)} get vm -n ${config.namespace} -w`,
    );
  }
  console.log(lines.join("\n") + "\n");
}

function relative(file: string): string {
  const shown = path.relative(process.cwd(), file);
  return shown.startsWith("..") ? file : shown;
}
