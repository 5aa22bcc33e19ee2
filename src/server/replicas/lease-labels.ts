// How the console marks its leases: all carry managed-by, and a kind telling duties, replicas and
// consoles apart (so `kubectl get lease -l labconsole.dev/lease=console` lists who holds which console).
export const leaseLabels = { "app.kubernetes.io/managed-by": "lab-console" } as const;
export const leaseKindLabel = "labconsole.dev/lease";
export type LeaseKind = "duty" | "replica" | "console";

export function labelsFor(kind: LeaseKind): Record<string, string> {
  return { ...leaseLabels, [leaseKindLabel]: kind };
}

/** On replica and console leases: where the holder's peers reach it. */
export const endpointAnnotation = "labconsole.dev/endpoint";
