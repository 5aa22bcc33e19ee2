// What every doctor check is: a pure function of what was read from the cluster, so each verdict can
// be tested without one. A verdict says ok, warn or fail, what it found, why it matters and how to fix
// it, in sentences by key (common/doctor-texts.ts) that the SPA says in the reader's language.
import { renderDoctorText, type DoctorText } from "../../common/doctor-texts.ts";
import type { DoctorCheck } from "../../common/operations-api.ts";
import type { KubeVirt, Namespace, Node } from "../kube/cluster-facts.ts";
import type { ForbiddenPermission, Permission } from "./permissions.ts";

/** A fact read from the cluster, or why it could not be read. */
export type Fact<T> = { ok: true; value: T } | { ok: false; error: string };

export interface ClusterReadings {
  /** Where the VMs run (LAB_NAMESPACE). */
  vmNamespace: string;
  /** Where the replicas keep their leases; undefined when coordination is off. */
  leaseNamespace?: string;
  kubernetesVersion: Fact<string>;
  kubeVirt: Fact<KubeVirt | undefined>;
  nodes: Fact<Node[]>;
  namespace: Fact<Namespace | undefined>;
  apiServerMetrics: Fact<string>;
  required: Fact<{ permission: Permission; allowed: boolean }[]>;
  forbidden: Fact<{ permission: ForbiddenPermission; allowed: boolean }[]>;
}

export type Check = (readings: ClusterReadings) => DoctorCheck;

/** A check's verdict, its English rendered from the sentences for `npm run doctor` and API clients. */
export function result(
  id: string,
  title: DoctorText,
  status: DoctorCheck["status"],
  summary: DoctorText,
  details: DoctorText[] = [],
  fix: DoctorText[] = [],
): DoctorCheck {
  return {
    id,
    title: renderDoctorText(title),
    status,
    summary: renderDoctorText(summary),
    details: details.map((detail) => renderDoctorText(detail)),
    fix: fix.length > 0 ? fix.map((line) => renderDoctorText(line)).join("\n") : null,
    texts: { title, summary, details, fix },
  };
}
