// Reaches a session's grading agent through KubeVirt's portforward subresource: one websocket per
// connection, raw TCP bytes in binary messages both ways (no channel byte, unlike a pod's
// port-forward). virt-api pings every second and cuts clients that stop answering; `ws` answers
// pings by itself. Credentials and TLS come from the same KubeConfig as every other cluster call.
// WARNING: this builds an API path outside src/server/kube; it belongs there once kube/ grows a
// streaming client.
import type { KubeConfig } from "@kubernetes/client-node";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import WebSocket, { createWebSocketStream } from "ws";
import { agentDefaultPort } from "../../common/agent-protocol.ts";
import { AgentUnreachableError, type ConnectToAgent } from "./agent-client.ts";

export interface PortForwardOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** The agent's port inside the guest. */
  port?: number;
}

/** KubeVirt's only stream subprotocol; virt-api also accepts none, but browsers and proxies like one. */
const kubevirtSubprotocol = "plain.kubevirt.io";
const maxRefusalBytes = 64 * 1024;

export function createPortForwardTransport(options: PortForwardOptions): ConnectToAgent {
  const port = options.port ?? agentDefaultPort;
  return async (sessionId, signal) => {
    const server = options.kubeConfig.getCurrentCluster()?.server;
    if (!server)
      throw new AgentUnreachableError("The console has no cluster configured to reach VMs through.");
    const url = new URL(
      `${server.replace(/\/+$/, "")}/apis/subresources.kubevirt.io/v1/namespaces/${encodeURIComponent(options.namespace)}` +
        `/virtualmachineinstances/${encodeURIComponent(sessionId)}/portforward/${port}`,
    );
    url.protocol = url.protocol === "http:" ? "ws:" : "wss:";
    const wsOptions: WebSocket.ClientOptions = {};
    await options.kubeConfig.applyToHTTPSOptions(wsOptions);
    signal.throwIfAborted();
    return openStream(new WebSocket(url, [kubevirtSubprotocol], wsOptions), sessionId, signal);
  };
}

function openStream(socket: WebSocket, sessionId: string, signal: AbortSignal): Promise<Duplex> {
  return new Promise<Duplex>((resolve, reject) => {
    const finish = (outcome: () => void) => {
      signal.removeEventListener("abort", onAbort);
      socket.off("open", onOpen).off("error", onError).off("unexpected-response", onRefused);
      outcome();
    };
    const onOpen = () => finish(() => resolve(createWebSocketStream(socket)));
    const onError = (error: Error) =>
      finish(() =>
        reject(
          new AgentUnreachableError(`The cluster cannot be reached for the port-forward (${error.message}).`),
        ),
      );
    const onRefused = (request: { destroy(): void }, response: IncomingMessage) => {
      readLimited(response).then((body) => {
        request.destroy();
        finish(() =>
          reject(new AgentUnreachableError(explainRefusal(sessionId, response.statusCode ?? 0, body))),
        );
      });
    };
    const onAbort = () => {
      socket.terminate();
      finish(() => reject(signal.reason));
    };
    socket.on("open", onOpen).on("error", onError).on("unexpected-response", onRefused);
    // After the handshake the stream reports errors; before it, a late one must not go unheard.
    socket.on("error", () => {});
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function readLimited(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxRefusalBytes) chunks.push(chunk);
    });
    response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    response.on("error", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

/** The API answers with a metav1.Status; virt-api's own failures are sometimes plain text. */
function explainRefusal(sessionId: string, status: number, body: string): string {
  let detail = body.trim().slice(0, 500);
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string") detail = parsed.message;
  } catch {
    // Not JSON: the text itself is the reason.
  }
  const why = detail ? `: ${detail}` : "";
  if (status === 404) return `The VM ${sessionId} has no running instance to connect to${why}.`;
  if (status === 401 || status === 403) {
    return `The cluster refused the console's port-forward to the VM (HTTP ${status}${why}); an operator must check its permissions.`;
  }
  if (status === 409) return `The VM cannot be reached right now${why}.`;
  if (status === 500) return `The VM did not accept a connection to its grading agent${why}.`;
  return `The cluster refused the port-forward to the VM (HTTP ${status}${why}).`;
}
