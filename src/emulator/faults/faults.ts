// The emulator's fault injection for reliability tests, as a typed handle. The same operations are
// served over HTTP by fault-api.ts when the emulator runs with `faults: true`.
import type { Registry } from "../apiserver/registry.ts";
import type { ObjectStore } from "../apiserver/store.ts";
import type { PolicyWebhook } from "../cluster/cluster-config.ts";
import type { WatchHub } from "../apiserver/watch.ts";
import { virtualMachineInstances } from "../cluster/resources.ts";
import type { GuestRuntime } from "../guests/guest-runtime.ts";
import type { Connections } from "../http/connections.ts";
import type { ConsoleStreams } from "../subresources/console.ts";
import type { RequestFaults } from "./request-faults.ts";

export interface EmulatorFaults {
  /** Ends every open watch (clients re-watch from their last resourceVersion). Returns how many. */
  endWatches(): number;
  /** Forgets the watch history: a watch from any earlier resourceVersion gets 410 Expired. */
  compactHistory(): void;
  /**
   * Drops every connection, as if the API server restarted; returns how many. With forMs, new
   * connections are reset for that long ("down for 20 s").
   */
  dropConnections(options?: { forMs?: number }): number;
  /** The next `count` requests fail: 500 InternalError, or 429 with Retry-After (default 1 s). */
  failRequests(options: { count: number; status: 500 | 429; retryAfterSeconds?: number }): void;
  /** Every request waits `ms` before it is served; only the next `count` when given. 0 ends it. */
  delayResponses(options: { ms: number; count?: number }): void;
  /** Kills a VMI's guest as a crash would (the VMI turns Failed); false when it has no guest. */
  killGuest(namespace: string, name: string): Promise<boolean>;
  /**
   * Kills the processes of a VMI's guest whose command line contains `text` (a crashed or OOM-killed
   * program); returns how many, 0 when the VMI has no guest.
   */
  killGuestProcesses(namespace: string, name: string, text: string): Promise<number>;
  /** Cuts a VMI's console connection without a close frame (1006); false when none is open. */
  cutConsole(namespace: string, name: string): boolean;
  /**
   * A validating webhook of the cluster's own starts refusing writes it matches, as a policy rolled
   * out in the middle of a class would (cluster config `policyWebhooks` has them from the start).
   */
  refuseWrites(webhook: PolicyWebhook): void;
  /** Ends pending failures, delays, a down time and the webhooks refuseWrites added. */
  reset(): void;
}

export interface FaultTargets {
  watches: WatchHub;
  store: ObjectStore;
  connections: Connections;
  requests: RequestFaults;
  registry: Registry;
  guests: GuestRuntime;
  consoles: ConsoleStreams;
  /** The API server's list, which the cluster config started. */
  policyWebhooks: PolicyWebhook[];
}

export function createFaults(targets: FaultTargets): EmulatorFaults {
  const configured = [...targets.policyWebhooks];
  const vmiUid = (namespace: string, name: string) =>
    targets.registry.find(virtualMachineInstances, namespace, name)?.metadata.uid;
  return {
    endWatches: () => {
      const open = targets.watches.size;
      targets.watches.closeAll();
      return open;
    },
    compactHistory: () => targets.store.compactHistory(),
    dropConnections: (options = {}) => targets.connections.drop(options),
    failRequests: ({ count, status, retryAfterSeconds = 1 }) =>
      targets.requests.failNext(count, { status, retryAfterSeconds }),
    delayResponses: ({ ms, count }) => targets.requests.delay(ms, count),
    killGuest: async (namespace, name) => {
      const uid = vmiUid(namespace, name);
      return uid !== undefined && targets.guests.crash(uid, "the guest was killed (emulator fault)");
    },
    killGuestProcesses: async (namespace, name, text) => {
      const uid = vmiUid(namespace, name);
      // A real guest's processes are behind its kernel: none of them can be killed from here.
      return (uid !== undefined && (await targets.guests.find(uid)?.killProcesses?.(text))) || 0;
    },
    cutConsole: (namespace, name) => {
      const uid = vmiUid(namespace, name);
      return uid !== undefined && targets.consoles.cut(uid);
    },
    refuseWrites: (webhook) => {
      targets.policyWebhooks.push(webhook);
    },
    reset: () => {
      targets.requests.reset();
      targets.connections.up();
      targets.policyWebhooks.splice(0, targets.policyWebhooks.length, ...configured);
    },
  };
}
