// A TCP connection into a VM through KubeVirt's portforward subresource: one websocket per
// connection, raw TCP bytes in binary messages both ways (no channel byte, unlike a pod's
// port-forward). virt-api pings every second and cuts clients that stop answering; `ws` answers
// pings by itself.
import type { KubeConfig } from "@kubernetes/client-node";
import type { Duplex } from "node:stream";
import { createWebSocketStream } from "ws";
import { openVmiWebSocket } from "./vmi-websocket.ts";

/**
 * Resolves with the connection once virt-api has accepted it. Rejects like openVmiWebSocket:
 * KubeStatusError (404: no VMI; 500: the guest refused the port), ClusterUnavailableError, or the
 * signal's reason.
 */
export type PortForwarder = (vmiName: string, port: number, signal: AbortSignal) => Promise<Duplex>;

export function createPortForwarder(kubeConfig: KubeConfig, namespace: string): PortForwarder {
  return async (vmiName, port, signal) => {
    const socket = await openVmiWebSocket({
      kubeConfig,
      namespace,
      vmiName,
      subresource: `portforward/${port}`,
      signal,
    });
    return createWebSocketStream(socket);
  };
}
