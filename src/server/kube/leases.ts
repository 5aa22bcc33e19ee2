// coordination.k8s.io/v1 Leases in the console's own namespace: what its replicas coordinate with
// (src/server/replicas). Every write after the first names the resourceVersion it read, so
// two replicas racing for one lease cannot both win: the slower one gets a 409.
import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from "@kubernetes/client-node";
import { countedCalls } from "./api-call.ts";
import type { KubeRequestCounter } from "./request-counter.ts";

export interface LeaseRecord {
  name: string;
  /** Opaque: handed back to replace or remove this very version. */
  resourceVersion: string;
  /** "" when nobody holds it (released). */
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** As the server sent them (RFC 3339 with microseconds), or null. */
  acquireTime: string | null;
  renewTime: string | null;
  leaseTransitions: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface LeaseSpecWrite {
  name: string;
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: Date;
  renewTime: Date;
  leaseTransitions: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface LeaseClient {
  readonly namespace: string;
  /** Undefined when there is no such lease. */
  get(name: string): Promise<LeaseRecord | undefined>;
  list(labelSelector: string): Promise<LeaseRecord[]>;
  /** Rejects with KubeStatusError 409 (AlreadyExists) when another replica created it first. */
  create(lease: LeaseSpecWrite): Promise<LeaseRecord>;
  /** Rejects with KubeStatusError 409 when the lease changed since `resourceVersion` was read. */
  replace(lease: LeaseSpecWrite, resourceVersion: string): Promise<LeaseRecord>;
  /** Deletes the lease if it is still at `resourceVersion`; false when it is gone or changed. */
  remove(name: string, resourceVersion: string): Promise<boolean>;
}

export function createLeaseClient(
  kubeConfig: KubeConfig,
  options: { namespace: string; counter?: KubeRequestCounter },
): LeaseClient {
  const { namespace, counter } = options;
  const api = kubeConfig.makeApiClient(CoordinationV1Api);

  const send = countedCalls(counter);

  function toBody(lease: LeaseSpecWrite, resourceVersion?: string): V1Lease {
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name: lease.name,
        namespace,
        ...(resourceVersion ? { resourceVersion } : {}),
        ...(lease.labels ? { labels: lease.labels } : {}),
        ...(lease.annotations ? { annotations: lease.annotations } : {}),
      },
      spec: {
        holderIdentity: lease.holderIdentity,
        leaseDurationSeconds: lease.leaseDurationSeconds,
        // MicroTime wants six fractional digits; a plain Date would send three and be refused.
        acquireTime: new V1MicroTime(lease.acquireTime.getTime()),
        renewTime: new V1MicroTime(lease.renewTime.getTime()),
        leaseTransitions: lease.leaseTransitions,
      },
    };
  }

  return {
    namespace,
    async get(name) {
      try {
        return toRecord(await send("get", () => api.readNamespacedLeaseWithHttpInfo({ name, namespace })));
      } catch (error) {
        if (isStatus(error, 404)) return undefined;
        throw error;
      }
    },
    async list(labelSelector) {
      const list = await send("list", () =>
        api.listNamespacedLeaseWithHttpInfo({ namespace, labelSelector }),
      );
      return list.items.map(toRecord);
    },
    async create(lease) {
      return toRecord(
        await send("create", () => api.createNamespacedLeaseWithHttpInfo({ namespace, body: toBody(lease) })),
      );
    },
    async replace(lease, resourceVersion) {
      return toRecord(
        await send("update", () =>
          api.replaceNamespacedLeaseWithHttpInfo({
            name: lease.name,
            namespace,
            body: toBody(lease, resourceVersion),
          }),
        ),
      );
    },
    async remove(name, resourceVersion) {
      try {
        await send("delete", () =>
          api.deleteNamespacedLeaseWithHttpInfo({
            name,
            namespace,
            body: { preconditions: { resourceVersion } },
          }),
        );
        return true;
      } catch (error) {
        if (isStatus(error, 404) || isStatus(error, 409)) return false;
        throw error;
      }
    },
  };
}

function isStatus(error: unknown, code: number): boolean {
  return (error as { statusCode?: unknown }).statusCode === code;
}

function toRecord(lease: V1Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  return {
    name: lease.metadata?.name ?? "",
    resourceVersion: lease.metadata?.resourceVersion ?? "",
    holderIdentity: spec.holderIdentity ?? "",
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    // client-node hands MicroTimes over as the strings the server sent.
    acquireTime: spec.acquireTime === undefined ? null : String(spec.acquireTime),
    renewTime: spec.renewTime === undefined ? null : String(spec.renewTime),
    leaseTransitions: spec.leaseTransitions ?? 0,
    labels: lease.metadata?.labels ?? {},
    annotations: lease.metadata?.annotations ?? {},
  };
}
