// virt-controller's start-failure backoff (syncStartFailureStatus, calculateStartBackoffTime and
// startFailureBackoffTimeLeft in pkg/virt-controller/watch/vm/vm.go): a VMI that fails before it ever
// ran counts as a failed start, and the next start of a VM that restarts by itself waits
// 10 s × failures² (plus up to half again at random, at most 300 s). A VMI that reached Running clears
// the count, so a guest that crashes later comes back at once.
import {
  field,
  isJsonObject,
  stringField,
  timestamp,
  type JsonObject,
  type KubeObject,
} from "../cluster/objects.ts";
import { isFinal, runStrategyOf } from "./kubevirt-state.ts";

const maxDelaySeconds = 300;
const minIntervalSeconds = 10;
/** The run strategies under which virt-controller starts a failed VM again by itself. */
const restartingStrategies = new Set(["Always", "RerunOnFailure", "Once"]);

export interface StartFailure {
  consecutiveFailCount: number;
  lastFailedVMIUID: string;
  retryAfterTimestamp: string;
}

export function startFailureOf(vm: KubeObject): StartFailure | undefined {
  const value = field(vm, "status", "startFailure");
  return isJsonObject(value) ? (value as unknown as StartFailure) : undefined;
}

export function restartsByItself(vm: KubeObject): boolean {
  return restartingStrategies.has(runStrategyOf(vm));
}

function everRan(vmi: KubeObject): boolean {
  const transitions = field(vmi, "status", "phaseTransitionTimestamps");
  return Array.isArray(transitions) && transitions.some((entry) => stringField(entry, "phase") === "Running");
}

/** Seconds to wait before the next start after `failures` failed starts in a row. */
export function backoffSeconds(failures: number, random: () => number = Math.random): number {
  const interval = Math.max(minIntervalSeconds, Math.floor(maxDelaySeconds / 30));
  const delay = interval * Math.max(1, failures) ** 2;
  return Math.min(maxDelaySeconds, delay + Math.floor(random() * (Math.floor(delay / 2) + 1)));
}

/**
 * The VM's next startFailure: cleared once a VMI ran (or under a strategy that never restarts by
 * itself), one more failure when this VMI failed before running, otherwise unchanged.
 * `secondMs` is how long one backoff second lasts (shorter with fast timing).
 */
export function nextStartFailure(
  vm: KubeObject,
  vmi: KubeObject | undefined,
  now: number,
  secondMs: number,
): StartFailure | undefined {
  const current = startFailureOf(vm);
  if ((vmi && everRan(vmi)) || !restartsByItself(vm)) return undefined;
  if (!vmi || !isFinal(vmi) || current?.lastFailedVMIUID === vmi.metadata.uid) return current;
  const failures = (current?.consecutiveFailCount ?? 0) + 1;
  return {
    consecutiveFailCount: failures,
    lastFailedVMIUID: vmi.metadata.uid,
    // A metav1.Time: whole seconds, rounded up so the wait is never shorter than the backoff.
    retryAfterTimestamp: timestamp(
      new Date(Math.ceil((now + backoffSeconds(failures) * secondMs) / 1000) * 1000),
    ),
  };
}

/** Milliseconds until the VM may be started again; 0 when it may start now. */
export function backoffLeftMs(vm: KubeObject, now: number): number {
  const retryAfter = startFailureOf(vm)?.retryAfterTimestamp;
  const at = retryAfter === undefined ? Number.NaN : Date.parse(retryAfter);
  return Number.isFinite(at) ? Math.max(0, at - now) : 0;
}

/** The status with startFailure set or removed. */
export function withStartFailure(status: JsonObject, startFailure: StartFailure | undefined): JsonObject {
  const { startFailure: _previous, ...rest } = status;
  return startFailure === undefined ? rest : { ...rest, startFailure: { ...startFailure } };
}
