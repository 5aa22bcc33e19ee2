// virt-api's start, stop and restart on VirtualMachines (pkg/virt-api/rest/lifecycle.go, v1.9.0):
// depending on the run strategy they flip spec.runStrategy (or the deprecated spec.running) or queue
// status.stateChangeRequests for the VM controller. Refusals about the VM's state are 409s with
// KubeVirt's wording; a request that would queue behind another stop/start is a 500, because virt-api
// answers getChangeRequestJson's error with errors.NewInternalError.
import type { Registry } from "../apiserver/registry.ts";
import { field, isJsonObject, type JsonObject, type KubeObject } from "../cluster/objects.ts";
import { virtualMachineInstances, virtualMachines } from "../cluster/resources.ts";
import { badRequest, conflict, notFound, type ApiError, type GroupResource } from "../http/status.ts";
import { kubevirtInternalError } from "./kubevirt-target.ts";
import {
  isFinal,
  phaseOf,
  runStrategyOf,
  stateChangeRequests,
  type StateChangeRequest,
} from "../controller/kubevirt-state.ts";

// virt-api names the resource in the singular in its errors.
const vmResource: GroupResource = { group: "kubevirt.io", plural: "virtualmachine" };
const vmNotRunning = "VM is not running";
const underway = "unable to complete request: stop/start already underway";

export type LifecycleAction = "start" | "stop" | "restart";

/** One call: the objects it reads, and whether its writes are only a dry run. */
interface Call {
  registry: Registry;
  vm: KubeObject;
  vmi: KubeObject | undefined;
  options: JsonObject;
  dryRun: boolean;
}

function refuse(call: Call, why: string): ApiError {
  return conflict(vmResource, call.vm.metadata.name, why);
}

function withSpec(vm: KubeObject, running: boolean): KubeObject {
  const spec = { ...(vm.spec as JsonObject) };
  if ("running" in spec) spec.running = running;
  else spec.runStrategy = running ? "Always" : "Halted";
  return { ...vm, spec };
}

/**
 * getChangeRequestJson: requests go onto an empty queue; a lone Stop replaces whatever is queued (a
 * stop always wins); anything else while requests are pending is refused. Posting clears startFailure.
 */
function withChangeRequests(vm: KubeObject, requests: StateChangeRequest[]): KubeObject {
  const loneStop = requests.length === 1 && requests[0]?.action === "Stop";
  if (stateChangeRequests(vm).length > 0 && !loneStop) throw kubevirtInternalError(underway);
  const { startFailure: _cleared, ...status } = (vm.status as JsonObject | undefined) ?? {};
  return { ...vm, status: { ...status, stateChangeRequests: requests } };
}

function numberOption(options: JsonObject, key: string): number | undefined {
  const value = options[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number") throw badRequest(`${key} must be a number`);
  return value;
}

/**
 * patchVMITerminationGracePeriod: sets the VMI's grace period at once (before any refusal that may
 * follow, as virt-api does) and returns the one it had, 0 when unset.
 */
function patchGracePeriod(call: Call, vmi: KubeObject, seconds: number): number {
  const old = field(vmi, "spec", "terminationGracePeriodSeconds");
  if (!call.dryRun) {
    call.registry.write(virtualMachineInstances, {
      ...vmi,
      spec: { ...(vmi.spec as JsonObject), terminationGracePeriodSeconds: seconds },
    });
  }
  return typeof old === "number" ? old : 0;
}

function start(call: Call): KubeObject {
  const { vm, vmi } = call;
  const strategy = runStrategyOf(vm);
  if (vmi && !isFinal(vmi) && phaseOf(vmi) !== "Unknown" && phaseOf(vmi) !== "") {
    throw refuse(call, "VM is already running");
  }
  switch (strategy) {
    case "Halted":
      return withSpec(vm, true);
    case "Manual":
    case "RerunOnFailure": {
      const needsRestart =
        vmi !== undefined && (strategy === "Manual" ? isFinal(vmi) : phaseOf(vmi) === "Succeeded");
      if (strategy === "RerunOnFailure" && vmi && phaseOf(vmi) === "Failed") {
        throw refuse(call, "RerunOnFailure does not support starting VM from failed state");
      }
      return withChangeRequests(
        vm,
        needsRestart && vmi
          ? [{ action: "Stop", uid: vmi.metadata.uid }, { action: "Start" }]
          : [{ action: "Start" }],
      );
    }
    case "Always":
    case "Once":
      throw refuse(call, `${strategy} does not support manual start requests`);
    default:
      // WaitAsReceiver: no case in virt-api's switch, so nothing changes and the answer is still 202.
      return vm;
  }
}

function stop(call: Call): KubeObject {
  const { vm, vmi, options } = call;
  const strategy = runStrategyOf(vm);
  const gracePeriod = numberOption(options, "gracePeriod");
  const active = vmi !== undefined && !isFinal(vmi);
  const oldGracePeriod =
    vmi && active && gracePeriod !== undefined ? patchGracePeriod(call, vmi, gracePeriod) : 0;
  switch (strategy) {
    case "Halted": {
      if (!vmi || !active) throw refuse(call, vmNotRunning);
      // Only a force stop of a VMI still shutting down, with a shorter grace period than it had.
      const hadGracePeriod = field(vmi, "spec", "terminationGracePeriodSeconds") !== undefined;
      if (gracePeriod === undefined || (hadGracePeriod && gracePeriod >= oldGracePeriod)) {
        throw refuse(call, "Halted only supports manual stop requests with a shorter graceperiod");
      }
      return withChangeRequests(vm, [{ action: "Stop", uid: vmi.metadata.uid }]);
    }
    case "Manual":
    case "RerunOnFailure":
      if (!vmi || !active) throw refuse(call, vmNotRunning);
      return withChangeRequests(vm, [{ action: "Stop", uid: vmi.metadata.uid }]);
    case "Always":
    case "Once":
      return withSpec(vm, false);
    default:
      return vm;
  }
}

/** RestartOptions are checked before the VM is looked up: only 0 (force) or nothing. */
function restartGracePeriod(options: JsonObject): number | undefined {
  const grace = numberOption(options, "gracePeriodSeconds");
  if (grace !== undefined && grace > 0) {
    throw badRequest("For force restart, only gracePeriod=0 is supported for now");
  }
  if (grace !== undefined && grace < 0) throw badRequest("gracePeriod has to be greater or equal to 0");
  return grace;
}

function restart(call: Call): KubeObject {
  const { vm, vmi, options } = call;
  const grace = restartGracePeriod(options);
  const strategy = runStrategyOf(vm);
  if (strategy === "Halted" || strategy === "Once") {
    throw refuse(call, `RunStategy ${strategy} does not support manual restart requests`);
  }
  if (!vmi) throw refuse(call, `${vmNotRunning}: Halted`);
  // A force restart shortens the grace period to 1 s first; a refusal below does not undo it.
  if (grace === 0) patchGracePeriod(call, vmi, 1);
  return withChangeRequests(vm, [{ action: "Stop", uid: vmi.metadata.uid }, { action: "Start" }]);
}

const actions: Record<LifecycleAction, (call: Call) => KubeObject> = { start, stop, restart };

/** Applies start/stop/restart to a VM (202 on success at the HTTP layer). Options are the request body. */
export function changeVmState(
  registry: Registry,
  action: LifecycleAction,
  namespace: string,
  name: string,
  options: unknown,
): void {
  const body = isJsonObject(options) ? options : {};
  if (action === "restart") restartGracePeriod(body);
  const vm = registry.find(virtualMachines, namespace, name);
  if (!vm) throw notFound(vmResource, name);
  const dryRunOption = field(body, "dryRun");
  const call: Call = {
    registry,
    vm,
    vmi: registry.find(virtualMachineInstances, namespace, name),
    options: body,
    dryRun: Array.isArray(dryRunOption) && dryRunOption.includes("All"),
  };
  const next = actions[action](call);
  if (!call.dryRun && next !== vm) registry.write(virtualMachines, next);
}
