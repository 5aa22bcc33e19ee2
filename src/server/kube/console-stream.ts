// Opens a VMI's serial console: KubeVirt's console subresource, raw serial bytes in binary messages
// both ways. It has no pings, no replay and room for one client (a new one silently kicks the old):
// console/ deals with all that.
import type { KubeConfig } from "@kubernetes/client-node";
import type WebSocket from "ws";
import { openVmiWebSocket } from "./vmi-websocket.ts";

/**
 * Resolves with the open websocket. Rejects with KubeStatusError when the cluster refused (400: the
 * VMI is not Running yet; 404: no VMI; 409: it failed), with ClusterUnavailableError when it did
 * not answer, and with the signal's reason when aborted.
 */
export type ConsoleConnector = (vmiName: string, signal: AbortSignal) => Promise<WebSocket>;

const options: WebSocket.ClientOptions = {
  // virt-api's own limit for the client's handshake (streamTimeout).
  handshakeTimeout: 10_000,
  // virt-handler sends what one read of the serial socket returned: far below this.
  maxPayload: 1024 * 1024,
  // Terminal bytes are small and latency-bound; compression would only cost CPU.
  perMessageDeflate: false,
};

export function createConsoleConnector(kubeConfig: KubeConfig, namespace: string): ConsoleConnector {
  return (vmiName, signal) =>
    openVmiWebSocket({ kubeConfig, namespace, vmiName, subresource: "console", options, signal });
}
