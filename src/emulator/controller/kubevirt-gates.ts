// Whether a KubeVirt feature gate is on, as virt-controller decides it from the KubeVirt CR
// (pkg/virt-config/featuregate/feature-gates.go IsEnabled): listed in featureGates wins, then listed
// in disabledFeatureGates (a field since v1.8), then the gate's default: since v1.9 a Beta gate is on
// unless disabled (v1.8 still ignored Beta defaults).
import { field, type KubeObject } from "../cluster/objects.ts";

/** The Beta gates of KubeVirt v1.9.0 that the emulator acts on (pkg/virt-config/featuregate/active.go). */
const betaGates = new Set(["ImageVolume"]);

function minorOf(version: string): number {
  return Number(/^v?1\.([0-9]+)/.exec(version)?.[1] ?? "0");
}

function listed(kubevirt: KubeObject | undefined, key: string, gate: string): boolean {
  const gates = field(kubevirt, "spec", "configuration", "developerConfiguration", key);
  return Array.isArray(gates) && gates.includes(gate);
}

export function kubevirtGateEnabled(
  kubevirt: KubeObject | undefined,
  gate: string,
  version: string,
): boolean {
  if (listed(kubevirt, "featureGates", gate)) return true;
  const minor = minorOf(version);
  if (minor >= 8 && listed(kubevirt, "disabledFeatureGates", gate)) return false;
  return betaGates.has(gate) && minor >= 9;
}
