// virt-api's pause and unpause on VirtualMachineInstances (PauseVMIRequestHandler and
// UnpauseVMIRequestHandler in pkg/virt-api/rest/lifecycle.go, v1.9.0), with what virt-handler and
// the VM controller do next folded in: the guest's processes stop (or run again), virt-handler's
// event is recorded (pkg/virt-handler/rest/lifecycle.go), and the VMI gains (or loses) the Paused
// condition, which the VM controller shows as printableStatus Paused.
//
// virt-api answers 200 once virt-handler has paused or resumed the domain (pkg/virt-api/rest/
// subresource.go 155-180) and writes no status itself: the condition comes with virt-handler's next
// sync of the VMI, from the domain's state (updatePausedConditions and calculatePausedCondition in
// pkg/virt-handler/vm.go 848-859 and 1195-1235). So for a moment after a 200 the VMI still shows
// what it was: not paused after a pause, paused after an unpause, and port-forward, which refuses
// while the condition is there (pkg/virt-api/rest/portforward.go 52-58), still refuses after an
// unpause. That moment is `conditionLagMs` here (the timings' toPausedCondition).
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
  /** From the domain's pause or resume to virt-handler's sync that shows it on the VMI. */
  conditionLagMs: number;
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

/** The pause and unpause subresources of every VMI, and the syncs that follow them. */
export class VmiPauses {
  /** The latest change of each VMI (by uid) whose condition is still to be written. */
  private readonly pending = new Map<string, { action: PauseAction; timer: NodeJS.Timeout }>();

  constructor(private readonly deps: PauseDeps) {}

  /** Pauses or unpauses a VMI; resolves once its guest's processes stopped or run again. */
  async change(action: PauseAction, namespace: string, name: string, options: unknown): Promise<void> {
    const { registry } = this.deps;
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

    const guest = this.deps.guests.find(vmi.metadata.uid);
    if (action === "pause") await guest?.pause();
    else await guest?.resume();
    const current = registry.find(virtualMachineInstances, namespace, name);
    if (!current || current.metadata.uid !== vmi.metadata.uid) return;
    this.deps.recorder?.record(
      current,
      "Normal",
      action === "pause" ? "Paused" : "Unpaused",
      action === "pause" ? "VirtualMachineInstance paused" : "VirtualMachineInstance unpaused",
      "virt-handler",
    );
    const uid = vmi.metadata.uid;
    clearTimeout(this.pending.get(uid)?.timer);
    const timer = setTimeout(() => {
      this.pending.delete(uid);
      this.sync(namespace, name, uid, action);
    }, this.deps.conditionLagMs);
    timer.unref();
    this.pending.set(uid, { action, timer });
  }

  close(): void {
    for (const { timer } of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }

  /** virt-handler's sync: the condition follows the domain, on the VMI as it is now. */
  private sync(namespace: string, name: string, uid: string, action: PauseAction): void {
    const { registry } = this.deps;
    const current = registry.find(virtualMachineInstances, namespace, name);
    if (!current || current.metadata.uid !== uid || phaseOf(current) !== "Running") return;
    const others = conditionsOf(current).filter((condition) => condition.type !== "Paused");
    registry.write(virtualMachineInstances, {
      ...current,
      status: {
        ...(current.status as JsonObject),
        conditions: action === "pause" ? [...others, pausedCondition()] : others,
      },
    });
  }
}
