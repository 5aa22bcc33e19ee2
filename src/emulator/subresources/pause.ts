// virt-api's pause and unpause on VirtualMachineInstances (PauseVMIRequestHandler and
// UnpauseVMIRequestHandler in pkg/virt-api/rest/lifecycle.go, v1.9.0), with what virt-handler and
// the VM controller do next folded in: the guest's processes stop (or run again), the VMI gains (or
// loses) the Paused condition virt-handler writes (updatePausedConditions and
// calculatePausedCondition in pkg/virt-handler/vm.go), virt-handler's event is recorded
// (pkg/virt-handler/rest/lifecycle.go) and the VM controller shows printableStatus Paused.
//
// The refusals are virt-api's, in its order: a VMI that is not Running is a 409 (pause says "VM is
// not running", unpause "VMI is not running", as upstream words them), pausing a VMI with a liveness
// probe other than a guest-agent ping is a 403, pausing one already paused and unpausing one that
// is not are 409s. unpause first refuses a VM whose snapshot is in progress. A dry run validates and
// changes nothing. Success is 200 with an empty body: virt-api writes no status of its own.
import type { Registry } from "../apiserver/registry.ts";
import { field, isJsonObject, timestamp, type JsonObject, type KubeObject } from "../cluster/objects.ts";
import { virtualMachineInstances, virtualMachines } from "../cluster/resources.ts";
import type { EventRecorder } from "../controller/events.ts";
import { conditionsOf, findCondition, phaseOf, type Condition } from "../controller/kubevirt-state.ts";
import type { GuestRuntime } from "../guests/guest-runtime.ts";
import { conflict, forbidden, notFound, qualifiedResource, type ApiError } from "../http/status.ts";
import { vmiConflict, vmiResource } from "./kubevirt-target.ts";

export type PauseAction = "pause" | "unpause";

const vmResource = { group: "kubevirt.io", plural: "virtualmachine" };

export interface PauseDeps {
  registry: Registry;
  guests: GuestRuntime;
  recorder?: EventRecorder;
}

/** errors.NewForbidden: `<resource> "<name>" is forbidden: <why>`. */
function forbiddenVmi(name: string, why: string): ApiError {
  return forbidden(`${qualifiedResource(vmiResource)} "${name}" is forbidden: ${why}`, {
    name,
    group: vmiResource.group,
    kind: vmiResource.plural,
  });
}

/** The Paused condition as virt-handler writes it for a pause the user asked for. */
function pausedCondition(): Condition {
  const now = timestamp();
  return {
    type: "Paused",
    status: "True",
    lastProbeTime: now,
    lastTransitionTime: now,
    reason: "PausedByUser",
    message: "VMI was paused by user",
  };
}

function isDryRun(options: unknown): boolean {
  const dryRun = isJsonObject(options) ? options.dryRun : undefined;
  return Array.isArray(dryRun) && dryRun[0] === "All";
}

function validatePause(vmi: KubeObject): void {
  const name = vmi.metadata.name;
  if (phaseOf(vmi) !== "Running") throw vmiConflict(name, "VM is not running");
  const probe = field(vmi, "spec", "livenessProbe");
  if (isJsonObject(probe) && probe.guestAgentPing === undefined) {
    throw forbiddenVmi(name, "Pausing VMIs with a non-GuestAgentPing LivenessProbe is not supported");
  }
  if (findCondition(vmi, "Paused")) throw vmiConflict(name, "VMI is already paused");
}

function validateUnpause(vmi: KubeObject): void {
  const name = vmi.metadata.name;
  if (phaseOf(vmi) !== "Running") throw vmiConflict(name, "VMI is not running");
  if (!findCondition(vmi, "Paused")) throw vmiConflict(name, "VMI is not paused");
}

/** Pauses or unpauses a VMI; resolves once its guest's processes stopped or run again. */
export async function changePause(
  deps: PauseDeps,
  action: PauseAction,
  namespace: string,
  name: string,
  options: unknown,
): Promise<void> {
  const { registry } = deps;
  if (action === "unpause") {
    // Looked up before the VMI: a VM that does not exist is no refusal, only its snapshot is.
    const vm = registry.find(virtualMachines, namespace, name);
    if (vm && field(vm, "status", "snapshotInProgress") != null) {
      throw conflict(vmResource, name, "VM snapshot is in progress");
    }
  }
  const vmi = registry.find(virtualMachineInstances, namespace, name);
  if (!vmi) throw notFound(vmiResource, name);
  if (action === "pause") validatePause(vmi);
  else validateUnpause(vmi);
  if (isDryRun(options)) return;

  const guest = deps.guests.find(vmi.metadata.uid);
  if (action === "pause") await guest?.pause();
  else await guest?.resume();
  // Read again: the VMI may have changed while the guest stopped (its agent condition, say).
  const current = registry.find(virtualMachineInstances, namespace, name);
  if (!current || current.metadata.uid !== vmi.metadata.uid) return;
  const others = conditionsOf(current).filter((condition) => condition.type !== "Paused");
  registry.write(virtualMachineInstances, {
    ...current,
    status: {
      ...(current.status as JsonObject),
      conditions: action === "pause" ? [...others, pausedCondition()] : others,
    },
  });
  deps.recorder?.record(
    current,
    "Normal",
    action === "pause" ? "Paused" : "Unpaused",
    action === "pause" ? "VirtualMachineInstance paused" : "VirtualMachineInstance unpaused",
    "virt-handler",
  );
}
