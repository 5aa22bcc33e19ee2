// virt-api's start, stop and restart on VirtualMachines (pkg/virt-api/rest/lifecycle.go): depending
// on the run strategy they flip spec.runStrategy (or the deprecated spec.running) or queue
// status.stateChangeRequests for the VM controller. Refusals are 409s with KubeVirt's wording.
import { ApiError, badRequest, conflict, notFound, type GroupResource } from "../http/status.ts";
import { field, isJsonObject, type JsonObject, type KubeObject } from "../objects.ts";
import type { Registry } from "../registry.ts";
import { virtualMachineInstances, virtualMachines } from "../resources.ts";
import {
  isFinal,
  phaseOf,
  runStrategyOf,
  stateChangeRequests,
  type StateChangeRequest,
} from "./kubevirt-state.ts";

// virt-api names the resource in the singular in its errors.
const vmResource: GroupResource = { group: "kubevirt.io", plural: "virtualmachine" };

export type LifecycleAction = "start" | "stop" | "restart";

function refuse(name: string, why: string): ApiError {
  return conflict(vmResource, name, why);
}

function withSpec(vm: KubeObject, running: boolean): KubeObject {
  const spec = { ...(vm.spec as JsonObject) };
  if ("running" in spec) spec.running = running;
  else spec.runStrategy = running ? "Always" : "Halted";
  return { ...vm, spec };
}

function withRequests(vm: KubeObject, requests: StateChangeRequest[]): KubeObject {
  return { ...vm, status: { ...(vm.status as JsonObject | undefined), stateChangeRequests: requests } };
}

function numberOption(options: JsonObject, key: string): number | undefined {
  const value = options[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number") throw badRequest(`${key} must be a number`);
  return value;
}

function checkNothingUnderway(vm: KubeObject, name: string): void {
  if (stateChangeRequests(vm).length > 0)
    throw refuse(name, "unable to complete request: stop/start already underway");
}

/** Decides the change for one action; returns the VM to store, or throws the refusal. */
function plan(
  action: LifecycleAction,
  vm: KubeObject,
  vmi: KubeObject | undefined,
  options: JsonObject,
): KubeObject {
  const name = vm.metadata.name;
  const strategy = runStrategyOf(vm);
  const vmiActive = vmi !== undefined && !isFinal(vmi) && phaseOf(vmi) !== "Unknown";
  switch (action) {
    case "start": {
      if (vmi && vmiActive && phaseOf(vmi) !== "") throw refuse(name, "VM is already running");
      switch (strategy) {
        case "Halted":
          return withSpec(vm, true);
        case "Manual":
        case "RerunOnFailure":
          if (strategy === "RerunOnFailure" && vmi && phaseOf(vmi) === "Failed") {
            throw refuse(name, "VM is in failed state, RerunOnFailure will restart it");
          }
          checkNothingUnderway(vm, name);
          return withRequests(
            vm,
            vmi && isFinal(vmi)
              ? [{ action: "Stop", uid: vmi.metadata.uid }, { action: "Start" }]
              : [{ action: "Start" }],
          );
        default:
          throw refuse(name, `${strategy} does not support manual start requests`);
      }
    }
    case "stop": {
      const gracePeriod = numberOption(options, "gracePeriod");
      switch (strategy) {
        case "Always":
        case "Once":
          return withSpec(vm, false);
        case "Manual":
        case "RerunOnFailure":
          if (!vmi || !vmiActive) throw refuse(name, "VM is not running");
          checkNothingUnderway(vm, name);
          return withRequests(vm, [{ action: "Stop", uid: vmi.metadata.uid }]);
        default:
          // Halted: only a force stop of a VMI still shutting down, with a shorter grace period.
          if (vmi && vmiActive && gracePeriod !== undefined) return vm;
          throw refuse(name, "VM is not running");
      }
    }
    case "restart": {
      const grace = numberOption(options, "gracePeriodSeconds");
      if (grace !== undefined && grace < 0)
        throw badRequest("gracePeriodSeconds has to be greater or equal to 0");
      if (grace !== undefined && grace > 0)
        throw badRequest("For force restart, only gracePeriod=0 is supported for now");
      if (strategy === "Halted" || strategy === "Once") {
        throw refuse(name, `RunStategy ${strategy} does not support manual restart requests`);
      }
      if (!vmi) throw refuse(name, "VM is not running: Halted");
      checkNothingUnderway(vm, name);
      return withRequests(vm, [{ action: "Stop", uid: vmi.metadata.uid }, { action: "Start" }]);
    }
  }
}

/** Applies start/stop/restart to a VM (202 on success at the HTTP layer). Options are the request body. */
export function changeVmState(
  registry: Registry,
  action: LifecycleAction,
  namespace: string,
  name: string,
  options: unknown,
): void {
  const body = isJsonObject(options) ? options : {};
  const vm = registry.find(virtualMachines, namespace, name);
  if (!vm) throw notFound(vmResource, name);
  const vmi = registry.find(virtualMachineInstances, namespace, name);
  const next = plan(action, vm, vmi, body);
  const dryRun = field(body, "dryRun");
  if (Array.isArray(dryRun) && dryRun.includes("All")) return;
  const grace = action === "stop" ? numberOption(body, "gracePeriod") : undefined;
  if (vmi && grace !== undefined && !vmi.metadata.deletionTimestamp) {
    registry.write(virtualMachineInstances, {
      ...vmi,
      spec: { ...(vmi.spec as JsonObject), terminationGracePeriodSeconds: grace },
    });
  }
  if (next !== vm) registry.write(virtualMachines, next);
}
