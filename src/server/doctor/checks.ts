// Every check the doctor runs on what it read from the cluster, in the order its report shows them:
// from whether the cluster answers at all to the settings that only change what a VM costs.
import type { Check } from "./check-verdict.ts";
import { clusterCheck, kubeVirtCheck, kvmCheck } from "./cluster-checks.ts";
import { imageVolumeCheck } from "./image-volume-check.ts";
import { cpuAllocationRatioCheck, serialConsoleLogCheck } from "./kubevirt-settings-checks.ts";
import { permissionsCheck } from "./permissions-check.ts";
import { vmNamespaceCheck } from "./vm-namespace-check.ts";

export const allChecks: readonly Check[] = [
  clusterCheck,
  kubeVirtCheck,
  imageVolumeCheck,
  kvmCheck,
  vmNamespaceCheck,
  permissionsCheck,
  cpuAllocationRatioCheck,
  serialConsoleLogCheck,
];
