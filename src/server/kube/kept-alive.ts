// The BFF's requests to the API server share one keep-alive agent, built once with the kubeconfig's
// CA and client certificate. client-node makes an agent for every request, so each one cost a new
// TCP connection, a TLS handshake and a SecureContext (the CA parsed again): the timers' requests
// (a lease renewal every 2 s per lease) showed in the profile of a console flood. The generated API
// clients (makeApiClient) take the agent through applySecurityAuthentication; our own requests
// (watches, subresources, /metrics) through applyToRequestOptions. Websockets are left out: an
// upgraded socket leaves the pool for good, so they keep opening a connection each, as before.
import http from "node:http";
import https from "node:https";
import {
  bufferFromFileOrString,
  KubeConfig,
  type Cluster,
  type RequestContext,
  type User,
} from "@kubernetes/client-node";

/**
 * How long an idle connection is kept: under kube-apiserver's 90 s idle timeout and the 60 s of
 * common load balancers in front of it, over the 2 s between lease renewals. A server announcing a
 * shorter one (`Keep-Alive: timeout=5` from Node's servers, the emulator's too) is believed.
 */
const idleSocketMs = 30_000;

export class KeptAliveKubeConfig extends KubeConfig {
  private current: { agent: http.Agent | undefined; fingerprint: string } | undefined;
  /** Agents replaced by a newer one whose requests (a watch) go on; let go once idle, or at close. */
  private readonly replaced = new Set<http.Agent>();
  private closed = false;

  /** A copy of `source` (its clusters, users, contexts and which one is current) keeping connections. */
  static from(source: KubeConfig): KeptAliveKubeConfig {
    const config = new KeptAliveKubeConfig();
    config.mergeConfig(source);
    return config;
  }

  // makeApiClient makes the KubeConfig its clients' auth method: this runs for each of their requests.
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const agent = this.sharedAgent();
    if (agent) context.setAgent(agent);
  }

  /**
   * Ends the kept connections at once (a stopping BFF; tests start and stop many). Node unrefs idle
   * sockets, so they never kept the process alive; requests after this get one connection each.
   */
  close(): void {
    this.closed = true;
    this.current?.agent?.destroy();
    for (const agent of this.replaced) agent.destroy();
  }

  /** An agent replaced: its idle connections go now, and it goes once no request (a watch) holds it. */
  private retire(agent: http.Agent): void {
    for (const sockets of Object.values(agent.freeSockets))
      for (const socket of sockets ?? []) socket.destroy();
    this.replaced.add(agent);
    for (const old of this.replaced) {
      if (isBusy(old)) continue;
      old.destroy();
      this.replaced.delete(old);
    }
  }

  /**
   * Undefined where every request keeps client-node's own agent: behind a proxy (its agents do the
   * connecting), with an exec plugin (it may hand out a client certificate per request), once closed.
   */
  sharedAgent(): http.Agent | undefined {
    if (this.closed) return undefined;
    // Read for every request, as client-node does: a CA or client certificate renewed in its file
    // (short-lived certificates) gets a new agent, whose connections use it.
    const credentials = credentialsOf(this.getCurrentCluster(), this.getCurrentUser());
    const print = credentials ? fingerprint(credentials) : "";
    if (!this.current || this.current.fingerprint !== print) {
      const previous = this.current?.agent;
      if (previous) this.retire(previous);
      this.current = { agent: credentials && agentFor(credentials), fingerprint: print };
    }
    return this.current.agent;
  }
}

/** Whether an agent still carries a request (a watch), idle connections aside. */
function isBusy(agent: http.Agent): boolean {
  return Object.values(agent.sockets).some((sockets) => (sockets?.length ?? 0) > 0);
}

/** The kubeconfig's credentials and TLS for a request made with node:http(s) (not a websocket). */
export async function applyToRequestOptions(
  kubeConfig: KubeConfig,
  options: https.RequestOptions,
): Promise<void> {
  await kubeConfig.applyToHTTPSOptions(options);
  const shared = kubeConfig instanceof KeptAliveKubeConfig ? kubeConfig.sharedAgent() : undefined;
  if (shared) options.agent = shared;
}

/** What client-node's applyHTTPSOptions reads for every request. */
interface AgentCredentials {
  server: string;
  ca: Buffer | null;
  cert: Buffer | null;
  privateKey: Buffer | null;
  skipTLSVerify: boolean;
  tlsServerName: string | undefined;
}

/** Undefined where no agent is shared (see sharedAgent). */
function credentialsOf(cluster: Cluster | null, user: User | null): AgentCredentials | undefined {
  if (!cluster || cluster.proxyUrl || user?.exec) return undefined;
  return {
    server: cluster.server,
    ca: bufferFromFileOrString(cluster.caFile, cluster.caData),
    cert: user ? bufferFromFileOrString(user.certFile, user.certData) : null,
    privateKey: user ? bufferFromFileOrString(user.keyFile, user.keyData) : null,
    skipTLSVerify: cluster.skipTLSVerify,
    tlsServerName: cluster.tlsServerName,
  };
}

function fingerprint({ server, ca, cert, privateKey }: AgentCredentials): string {
  return [server, ca, cert, privateKey].map((part) => part?.toString("base64") ?? "").join(" ");
}

function agentFor(credentials: AgentCredentials): http.Agent {
  const { server, ca, cert, privateKey, skipTLSVerify, tlsServerName } = credentials;
  // No maxSockets: a watch holds its connection for minutes and must never make a request wait.
  const kept = { keepAlive: true, timeout: idleSocketMs };
  if (server.startsWith("http:")) return new http.Agent(kept);
  return new https.Agent({
    ...kept,
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(privateKey ? { key: privateKey } : {}),
    ...(skipTLSVerify ? { rejectUnauthorized: false } : {}),
    ...(tlsServerName ? { servername: tlsServerName } : {}),
  });
}
