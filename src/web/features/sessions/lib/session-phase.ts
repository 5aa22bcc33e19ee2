// KubeVirt's VMI phases, which the pages translate; a phase newer than this list shows as KubeVirt names it.
export const vmiPhases = [
  "Pending",
  "Scheduling",
  "Scheduled",
  "Running",
  "Succeeded",
  "Failed",
  "Unknown",
] as const;
export type VmiPhase = (typeof vmiPhases)[number];

export function isVmiPhase(phase: string): phase is VmiPhase {
  return (vmiPhases as readonly string[]).includes(phase);
}
