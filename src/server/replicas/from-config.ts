// The coordination the configuration asks for: leases in the console's namespace (the default,
// right for a single replica too), or none at all.
import type { KubeConfig } from "@kubernetes/client-node";
import type { FastifyBaseLogger } from "fastify";
import { createLeaseClient } from "../kube/leases.ts";
import type { KubeRequestCounter } from "../kube/request-counter.ts";
import { createLeaseCoordination, type Coordination } from "./coordination.ts";
import { replicaIdentity } from "./identity.ts";
import { leaseTimingFor } from "./timing.ts";

export interface CoordinationSettings {
  /** "leases": coordinate through Leases (the default, right for one replica too); "off": act alone. */
  mode: "leases" | "off";
  /** Where the leases live: the console's own namespace. */
  namespace: string;
  /** A dead replica's duties move after this long; renewals come every 2/15 of it. */
  leaseDurationSeconds: number;
  /** The pod's name and IP (downward API): the replica's identity, and where its peers reach it. */
  podName: string | undefined;
  podIp: string | undefined;
}

/** For buildApp's `coordination`; undefined when switched off (the app then acts alone). */
export function coordinationFromConfig(
  settings: CoordinationSettings,
  kubeConfig: KubeConfig,
  counter: KubeRequestCounter,
): ((log: FastifyBaseLogger) => Coordination) | undefined {
  if (settings.mode === "off") return undefined;
  const leases = createLeaseClient(kubeConfig, { namespace: settings.namespace, counter });
  const identity = replicaIdentity(settings.podName);
  const timing = leaseTimingFor(settings.leaseDurationSeconds);
  return (log) => createLeaseCoordination({ leases, identity, timing, log });
}
