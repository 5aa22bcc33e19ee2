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
  private agent: http.Agent | undefined;
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
    this.agent?.destroy();
  }

  /**
   * Undefined where every request keeps client-node's own agent: behind a proxy (its agents do the
   * connecting), with an exec plugin (it may hand out a client certificate per request), once closed.
   */
  sharedAgent(): http.Agent | undefined {
    if (this.closed) return undefined;
    this.agent ??= agentFor(this.getCurrentCluster(), this.getCurrentUser());
    return this.agent;
  }
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

function agentFor(cluster: Cluster | null, user: User | null): http.Agent | undefined {
  if (!cluster || cluster.proxyUrl || user?.exec) return undefined;
  // No maxSockets: a watch holds its connection for minutes and must never make a request wait.
  const kept = { keepAlive: true, timeout: idleSocketMs };
  if (cluster.server.startsWith("http:")) return new http.Agent(kept);
  // What client-node's applyHTTPSOptions reads for every request, read once.
  const ca = bufferFromFileOrString(cluster.caFile, cluster.caData);
  const cert = user && bufferFromFileOrString(user.certFile, user.certData);
  const key = user && bufferFromFileOrString(user.keyFile, user.keyData);
  return new https.Agent({
    ...kept,
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(cluster.skipTLSVerify ? { rejectUnauthorized: false } : {}),
    ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
  });
}
