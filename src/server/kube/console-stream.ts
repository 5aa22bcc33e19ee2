// Opens a VMI's consoles: KubeVirt's console subresource (raw serial bytes) and its vnc subresource
// (QEMU's RFB stream), in binary messages both ways. Neither has pings or replay, and each has room
// for one client (a new one silently kicks the old): console/ and screen/ deal with all that.
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

const screenOptions: WebSocket.ClientOptions = {
  ...options,
  // A full screen's update from QEMU, even uncompressed (720x400 at 4 bytes, or a desktop's 1280x800),
  // comes in pieces of one read of its socket each: far below this.
  maxPayload: 16 * 1024 * 1024,
};

/** The VMI's screen, QEMU's VNC server: same outcomes as ConsoleConnector (400 also when it has no graphics device). */
export function createScreenConnector(kubeConfig: KubeConfig, namespace: string): ConsoleConnector {
  return (vmiName, signal) =>
    openVmiWebSocket({ kubeConfig, namespace, vmiName, subresource: "vnc", options: screenOptions, signal });
}
