// The coordination the configuration asks for: leases in the console's namespace (the default,
// right for a single replica too), or none at all.
import type { KubeConfig } from "@kubernetes/client-node";
import type { FastifyBaseLogger } from "fastify";
import type { CoordinationSettings } from "../config.ts";
import { createLeaseClient } from "../kube/leases.ts";
import type { KubeRequestCounter } from "../kube/request-counter.ts";
import { createLeaseCoordination, type Coordination } from "./coordination.ts";
import { replicaIdentity } from "./identity.ts";
import { leaseTimingFor } from "./timing.ts";

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
