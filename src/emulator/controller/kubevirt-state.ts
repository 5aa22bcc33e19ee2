// Small readers for KubeVirt objects, named after the helpers in KubeVirt's API package.
import { field, isJsonObject, stringField, timestamp, type KubeObject } from "../cluster/objects.ts";

export type RunStrategy = "Always" | "Halted" | "Manual" | "RerunOnFailure" | "Once" | "WaitAsReceiver";

export interface StateChangeRequest {
  action: "Start" | "Stop";
  uid?: string;
  data?: Record<string, string>;
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
}

/** vm.RunStrategy(): running true -> Always, false -> Halted. */
export function runStrategyOf(vm: KubeObject): RunStrategy {
  const strategy = stringField(vm, "spec", "runStrategy");
  if (strategy) return strategy as RunStrategy;
  return field(vm, "spec", "running") === true ? "Always" : "Halted";
}

export function phaseOf(vmi: KubeObject | undefined): string {
  return stringField(vmi, "status", "phase") ?? "";
}

export function isFinal(vmi: KubeObject): boolean {
  const phase = phaseOf(vmi);
  return phase === "Succeeded" || phase === "Failed";
}

export function stateChangeRequests(vm: KubeObject): StateChangeRequest[] {
  const requests = field(vm, "status", "stateChangeRequests");
  return Array.isArray(requests) ? (requests.filter(isJsonObject) as unknown as StateChangeRequest[]) : [];
}

export function conditionsOf(object: KubeObject | undefined): Condition[] {
  const conditions = field(object, "status", "conditions");
  return Array.isArray(conditions) ? (conditions.filter(isJsonObject) as unknown as Condition[]) : [];
}

export function findCondition(object: KubeObject | undefined, type: string): Condition | undefined {
  return conditionsOf(object).find((condition) => condition.type === type);
}

export function isOwnedBy(object: KubeObject, owner: KubeObject): boolean {
  return (object.metadata.ownerReferences ?? []).some((reference) => reference.uid === owner.metadata.uid);
}

export function condition(type: string, status: "True" | "False", reason = "", message = ""): Condition {
  return {
    type,
    status,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
    lastProbeTime: null,
    lastTransitionTime: timestamp(),
  };
}
