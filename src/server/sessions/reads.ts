// Builds the session reads for the chosen mode, with the readiness they imply.
import type { FastifyBaseLogger } from "fastify";
import type { ClusterClient } from "../kube/client.ts";
import { ObjectCache } from "../kube/object-cache.ts";
import type { VirtualMachine, VirtualMachineInstance } from "../kube/types.ts";
import { createCachedSessionSource, createDirectSessionSource, type SessionSource } from "./source.ts";

export type SessionsReadMode = "cache" | "direct";

/** Whether the reads can serve real data: what /api/readyz reports. */
export interface Readiness {
  ready: boolean;
  /** Why not, in words an operator can act on. */
  reason: string;
}

export interface SessionReads {
  source: SessionSource;
  readiness(): Promise<Readiness>;
  /** Times each cluster watch was started again, by resource (empty in direct mode). */
  watchRestarts(): Record<string, number>;
  start(): void;
  stop(): Promise<void>;
}

export function createSessionReads(
  cluster: ClusterClient,
  mode: SessionsReadMode,
  log: FastifyBaseLogger,
): SessionReads {
  if (mode === "direct") {
    return {
      source: createDirectSessionSource(cluster),
      async readiness() {
        try {
          await cluster.serverVersion();
          return { ready: true, reason: "" };
        } catch {
          return { ready: false, reason: "The cluster does not answer." };
        }
      },
      watchRestarts: () => ({}),
      start() {},
      async stop() {},
    };
  }
  const vms = new ObjectCache<VirtualMachine>(cluster.virtualMachines, { name: "virtualmachines", log });
  const vmis = new ObjectCache<VirtualMachineInstance>(cluster.virtualMachineInstances, {
    name: "virtualmachineinstances",
    log,
  });
  const caches = [vms, vmis];
  return {
    source: createCachedSessionSource(vms, vmis),
    async readiness() {
      if (!caches.every((cache) => cache.synced)) {
        return { ready: false, reason: "Still loading sessions from the cluster." };
      }
      if (caches.some((cache) => cache.stale)) {
        return { ready: false, reason: "Lost the watch on the cluster; reconnecting." };
      }
      return { ready: true, reason: "" };
    },
    watchRestarts: () => ({ virtualmachines: vms.restarts, virtualmachineinstances: vmis.restarts }),
    start() {
      for (const cache of caches) cache.start();
    },
    async stop() {
      await Promise.all(caches.map((cache) => cache.stop()));
    },
  };
}
