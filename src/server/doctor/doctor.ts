// Runs the doctor: reads everything the checks need from the cluster at once (each reading may fail
// on its own), then lets every check judge. `npm run doctor` and the instructor page share this.
import type { DoctorReport, DoctorStatus } from "../../common/operations-api.ts";
import type { ClusterFacts } from "../kube/cluster-facts.ts";
import { ClusterUnavailableError, KubeStatusError } from "../kube/errors.ts";
import type { WarmPatchRefusalSummary } from "../classes/warm-patch-refusals.ts";
import type { ClusterReadings, Fact } from "./check-verdict.ts";
import { allChecks } from "./checks.ts";
import { warmPatchCheck } from "./warm-patch-check.ts";
import {
  forbiddenPermissions,
  requiredPermissions,
  type Permission,
  type PermissionScope,
} from "./permissions.ts";

export async function runDoctor(
  facts: ClusterFacts,
  options: {
    vmNamespace: string;
    /** Where the replicas keep their leases; undefined when coordination is off (nothing to ask). */
    leaseNamespace?: string;
    now?: () => Date;
    /** What the running console saw of its warm VMs; the command line has no such view. */
    warmPatchRefusals?: () => WarmPatchRefusalSummary;
  },
): Promise<DoctorReport> {
  const { vmNamespace, leaseNamespace } = options;
  const namespaceOf = (scope: PermissionScope) =>
    scope === "vm-namespace" ? vmNamespace : scope === "lease-namespace" ? leaseNamespace : undefined;
  const asked = requiredPermissions.filter(
    (permission) => permission.scope !== "lease-namespace" || leaseNamespace !== undefined,
  );
  const ask = (permission: Permission) =>
    facts.canI(
      "path" in permission
        ? { verb: permission.verb, path: permission.path }
        : {
            verb: permission.verb,
            group: permission.group,
            resource: permission.resource,
            subresource: permission.subresource,
            namespace: namespaceOf(permission.scope),
            name: permission.onlyTheNamespace ? vmNamespace : undefined,
          },
    );
  const [kubernetesVersion, kubeVirt, nodes, namespace, apiServerMetrics, required, forbidden] =
    await Promise.all([
      read(() => facts.kubernetesVersion()),
      read(() => facts.kubeVirt()),
      read(() => facts.nodes()),
      read(() => facts.namespace(vmNamespace)),
      read(() => facts.apiServerMetrics()),
      read(() =>
        Promise.all(asked.map(async (permission) => ({ permission, allowed: await ask(permission) }))),
      ),
      read(() =>
        Promise.all(
          forbiddenPermissions.map(async (permission) => ({
            permission,
            allowed: await facts.canI({ ...permission, namespace: namespaceOf(permission.scope) }),
          })),
        ),
      ),
    ]);
  const readings: ClusterReadings = {
    vmNamespace,
    leaseNamespace,
    kubernetesVersion,
    kubeVirt,
    nodes,
    namespace,
    apiServerMetrics,
    required,
    forbidden,
  };
  const checks = allChecks.map((check) => check(readings));
  if (options.warmPatchRefusals) checks.push(warmPatchCheck(options.warmPatchRefusals()));
  return {
    checkedAt: (options.now?.() ?? new Date()).toISOString(),
    status: worst(checks.map((check) => check.status)),
    checks,
  };
}

async function read<T>(get: () => Promise<T>): Promise<Fact<T>> {
  try {
    return { ok: true, value: await get() };
  } catch (error) {
    return { ok: false, error: describeError(error) };
  }
}

function describeError(error: unknown): string {
  if (error instanceof KubeStatusError) {
    if (error.statusCode === 401) return "the API server does not accept the console's credentials (401).";
    if (error.statusCode === 403) return `forbidden (403): ${error.message}`;
    return `${error.message} (${error.statusCode})`;
  }
  if (error instanceof ClusterUnavailableError) {
    const cause = error.cause instanceof Error ? error.cause.message : String(error.cause);
    return `no answer (${cause}).`;
  }
  return error instanceof Error ? error.message : String(error);
}

const order: DoctorStatus[] = ["ok", "warn", "fail"];

function worst(statuses: DoctorStatus[]): DoctorStatus {
  return statuses.reduce<DoctorStatus>((a, b) => (order.indexOf(b) > order.indexOf(a) ? b : a), "ok");
}
