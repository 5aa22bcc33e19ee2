// A VM's status as virt-controller derives it from the VM and its VMI (updateStatus and
// setPrintableStatus in pkg/virt-controller/watch/vm/vm.go): created, ready, the Ready condition,
// the mirrored VMI conditions and printableStatus, evaluated in KubeVirt's order.
import { timestamp, type JsonObject, type KubeObject } from "../cluster/objects.ts";
import {
  conditionsOf,
  findCondition,
  isFinal,
  phaseOf,
  runStrategyOf,
  stateChangeRequests,
  type Condition,
} from "./kubevirt-state.ts";
import { restartsByItself, startFailureOf } from "./start-failure.ts";

export interface Expectations {
  /** A VMI should come up (strategy or a pending Start request) but none exists yet. */
  startExpected: boolean;
  /** The VMI should go away (Halted, or a pending Stop request). */
  stopExpected: boolean;
}

export function printableStatus(vm: KubeObject, vmi: KubeObject | undefined, expect: Expectations): string {
  if (vm.metadata.deletionTimestamp) return "Terminating";
  if (vmi && !isFinal(vmi) && (vmi.metadata.deletionTimestamp || expect.stopExpected)) return "Stopping";
  const phase = phaseOf(vmi);
  if (vmi && phase === "Running") {
    return findCondition(vmi, "Paused")?.status === "True" ? "Paused" : "Running";
  }
  const scheduled = findCondition(vmi, "PodScheduled");
  if (vmi && scheduled?.status === "False" && scheduled.reason === "Unschedulable")
    return "ErrorUnschedulable";
  if ((!vmi && expect.startExpected) || (vmi && ["", "Pending", "Scheduling", "Scheduled"].includes(phase))) {
    return "Starting";
  }
  const failedStarts = startFailureOf(vm)?.consecutiveFailCount ?? 0;
  if (failedStarts > 0 && restartsByItself(vm) && (vmi ? isFinal(vmi) : !expect.startExpected)) {
    return "CrashLoopBackOff";
  }
  if (!vmi || isFinal(vmi)) return "Stopped";
  return "Unknown";
}

/** Keeps a condition's lastTransitionTime while its status stays the same. */
function carryTransition(next: Condition, previous: Condition | undefined): Condition {
  const unchanged = previous && previous.status === next.status;
  return {
    ...next,
    lastProbeTime: null,
    lastTransitionTime: unchanged
      ? (previous.lastTransitionTime ?? null)
      : (next.lastTransitionTime ?? timestamp()),
  };
}

function readyCondition(vmi: KubeObject | undefined): Condition {
  if (!vmi) return { type: "Ready", status: "False", reason: "VMINotExists", message: "VMI does not exist" };
  const ready = findCondition(vmi, "Ready");
  if (!ready) {
    return {
      type: "Ready",
      status: "False",
      reason: "VMIConditionMissing",
      message: "VMI does not have Ready condition",
    };
  }
  return { ...ready };
}

export function vmStatus(vm: KubeObject, vmi: KubeObject | undefined, expect: Expectations): JsonObject {
  const previous = conditionsOf(vm);
  const previousOf = (type: string): Condition | undefined =>
    previous.find((condition) => condition.type === type);
  // VM-owned conditions come first; every other VMI condition is mirrored as it is.
  const conditions = [
    carryTransition(readyCondition(vmi), previousOf("Ready")),
    ...conditionsOf(vmi)
      .filter((condition) => condition.type !== "Ready")
      .map((condition) => carryTransition(condition, previousOf(condition.type))),
  ];
  const requests = stateChangeRequests(vm);
  const status: JsonObject = {
    printableStatus: printableStatus(vm, vmi, expect),
    runStrategy: runStrategyOf(vm),
    conditions,
    desiredGeneration: vm.metadata.generation ?? 1,
    observedGeneration: vm.metadata.generation ?? 1,
  };
  if (vmi) status.created = true;
  if (vmi && findCondition(vmi, "Ready")?.status === "True") status.ready = true;
  if (requests.length > 0) status.stateChangeRequests = requests;
  const startFailure = (vm.status as JsonObject | undefined)?.startFailure;
  if (startFailure !== undefined) status.startFailure = startFailure;
  return status;
}
