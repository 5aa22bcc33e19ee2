// What a student sees of a session, derived from its VirtualMachine and (when one exists) its
// VirtualMachineInstance. The VMI is the fresher source: the VM's printableStatus is computed from it
// by virt-controller and can lag a moment, so where both speak the VMI wins.
//
// First matching row wins:
//
// | seen                                                                  | status   | message          |
// |-----------------------------------------------------------------------|----------|------------------|
// | VM restarting: a Start state-change request pending, VM not deleted   | starting | "is restarting"  |
// | VM deletionTimestamp; printableStatus Terminating                     | stopping | -                |
// | VM startFailure, and a VMI on its way up (not final, not deleted)     | starting | trying again     |
// | printableStatus CrashLoopBackOff; VM startFailure and a final VMI     | failed   | start failures   |
// | VMI phase Failed, runStrategy Always (KubeVirt replaces the VMI)      | starting | why, restarting  |
// | printableStatus Stopping; VMI deletionTimestamp                       | stopping | -                |
// | VMI phase Failed (other run strategies)                               | failed   | why it stopped   |
// | VMI phase Running (printableStatus Running, Migrating)                | running  | -                |
// | VMI phase Running, paused (printableStatus Paused)                    | running  | "is paused"      |
// | VMI phase Succeeded (guest shut down; runStrategy Always restarts it) | stopping | -                |
// | VMI PodScheduled=False reason Unschedulable; ErrorUnschedulable       | failed   | no node has room |
// | VMI Synchronized=False ErrImagePull or ImagePullBackOff; the same     | failed   | image not pulled |
// |   printableStatus                                                     |          |                  |
// | printableStatus ErrorPvcNotFound, DataVolumeError                     | failed   | disk problem     |
// | VMI phase Unknown (its node stopped reporting)                        | failed   | lost contact     |
// | no VMI and the VM is halted (runStrategy Halted, running: false)      | failed   | stopped outside  |
// | everything else: no VMI yet; VMI phase "", Pending, Scheduling,       | starting | -                |
// |   Scheduled, WaitingForSync; printableStatus Stopped (runStrategy     |          |                  |
// |   Always starts it), Provisioning, Starting, WaitingForVolumeBinding, |          |                  |
// |   WaitingForReceiver, Unknown                                         |          |                  |
import {
  HelpRequest,
  SessionIdle,
  type Session,
  type SessionNoticeReason,
  type SessionStatus,
} from "../../common/api.ts";
import type { ErrorParams } from "../../common/error-reasons.ts";
import type { Condition, VirtualMachine, VirtualMachineInstance } from "../kube/types.ts";
import { annotationKeys, labelKeys } from "./labels.ts";

export function toSession(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined): Session {
  const { status, notice } = deriveStatus(vm, vmi);
  const extensions = Number.parseInt(vm.metadata.annotations?.[annotationKeys.extensions] ?? "", 10);
  return {
    id: vm.metadata.name ?? "",
    labId: vm.metadata.labels?.[labelKeys.lab] ?? "",
    owner: vm.metadata.annotations?.[annotationKeys.owner] ?? "",
    section: vm.metadata.labels?.[labelKeys.section] ?? null,
    status,
    phase: vmi?.status?.phase ?? "",
    // A claimed warm VM is older than its session: the session starts at the claim.
    createdAt: vm.metadata.annotations?.[annotationKeys.claimedAt] ?? vm.metadata.creationTimestamp ?? "",
    expiresAt: vm.metadata.annotations?.[annotationKeys.expiresAt] ?? "",
    extensions: Number.isSafeInteger(extensions) && extensions >= 0 ? extensions : 0,
    timeline: (vmi?.status?.phaseTransitionTimestamps ?? []).map((entry) => ({
      phase: entry.phase,
      at: entry.phaseTransitionTimestamp,
    })),
    message: notice?.message ?? null,
    notice: notice ? { reason: notice.reason, params: notice.params } : null,
    ...helpOf(vm),
    ...idleOf(vm),
    start: vm.metadata.annotations?.[annotationKeys.claimedAt] === undefined ? "cold" : "warm",
  };
}

/** The raised hand, or nothing when the annotation is absent or not one (edited by hand). */
function helpOf(vm: VirtualMachine): { help?: HelpRequest } {
  const help = annotationJson(vm, annotationKeys.help, HelpRequest);
  return help ? { help } : {};
}

/** The idle warning or pause (idle/idle-pass.ts writes it); nothing when absent or not one. */
function idleOf(vm: VirtualMachine): { idle?: SessionIdle } {
  const idle = annotationJson(vm, annotationKeys.idle, SessionIdle);
  return idle ? { idle } : {};
}

/** An annotation that holds JSON of a known shape, or undefined when it is absent or holds something else. */
function annotationJson<T>(
  vm: VirtualMachine,
  key: string,
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
): T | undefined {
  const raw = vm.metadata.annotations?.[key];
  if (raw === undefined) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** What is wrong, as a reason the SPA translates and in English for API clients. */
interface Notice {
  reason: SessionNoticeReason;
  params: ErrorParams;
  message: string;
}

/**
 * Sessions that hold a place: one per student and lab, and in the quotas. A failed one still holds
 * its place until it is ended; a stopping one is already on its way out.
 */
export const placeHoldingStatuses: ReadonlySet<SessionStatus> = new Set(["starting", "running", "failed"]);

function notice(reason: SessionNoticeReason, message: string, params: ErrorParams = {}): Notice {
  return { reason, params, message };
}

function deriveStatus(
  vm: VirtualMachine,
  vmi: VirtualMachineInstance | undefined,
): { status: SessionStatus; notice: Notice | null } {
  const printable = vm.status?.printableStatus;
  const phase = vmi?.status?.phase;
  const ok = (status: SessionStatus) => ({ status, notice: null });
  const starting = (why: Notice) => ({ status: "starting" as const, notice: why });
  const failed = (why: Notice) => ({ status: "failed" as const, notice: why });

  // Restart (KubeVirt's subresource or virtctl): the old VMI is torn down while the VM waits to
  // start a new one. Not the end of the session, so consoles wait instead of ending.
  const restarting = vm.status?.stateChangeRequests?.some((request) => request.action === "Start");
  if (restarting && !vm.metadata.deletionTimestamp) {
    return starting(notice("restarting", "The VM is restarting"));
  }
  if (vm.metadata.deletionTimestamp || printable === "Terminating") return ok("stopping");

  // A VMI that failed after it ran (a crash, an OOM kill, a lost node): under runStrategy Always
  // virt-controller replaces it at once, so the session goes on. One that failed before it ever ran
  // is a failed start, which KubeVirt retries only after a growing backoff.
  const failedStarts = vm.status?.startFailure?.consecutiveFailCount ?? 0;
  const times = failedStarts > 1 ? ` ${failedStarts} times in a row` : "";
  const vmiFinished = phase === "Failed" || phase === "Succeeded" || vmi?.metadata.deletionTimestamp;
  const count = { count: Math.max(1, failedStarts) };
  if (failedStarts > 0 && vmi && !vmiFinished) {
    return starting(
      notice("start_retrying", `The VM failed to start${times}; the cluster is trying again`, count),
    );
  }
  if (printable === "CrashLoopBackOff" || (failedStarts > 0 && vmi)) {
    return failed(
      notice(
        "start_failing",
        `The VM failed to start${times}; the cluster keeps retrying. The cause is in the cluster, not the lab: an operator can find it with Lab Console's doctor`,
        count,
      ),
    );
  }
  if (phase === "Failed" && restartsByItself(vm)) {
    const why = whyFailed(vmi);
    return starting(
      notice(`${why.reason}_restarting`, `${why.message}; the cluster is starting it again`, why.params),
    );
  }

  if (printable === "Stopping" || vmi?.metadata.deletionTimestamp) return ok("stopping");
  if (phase === "Failed") return failed(whyFailed(vmi));
  if (phase === "Running") {
    const paused = printable === "Paused" || conditionOf(vmi, "Paused")?.status === "True";
    return paused
      ? {
          status: "running",
          notice: notice("paused", "The VM is paused; its console will not respond until it is resumed"),
        }
      : ok("running");
  }
  if (phase === "Succeeded") return ok("stopping");

  const unschedulable = conditionOf(vmi, "PodScheduled");
  if (unschedulable?.status === "False" && unschedulable.reason === "Unschedulable") {
    return failed(whyUnschedulable(vm, unschedulable.message ?? ""));
  }
  if (printable === "ErrorUnschedulable") return failed(whyUnschedulable(vm, ""));

  const sync = conditionOf(vmi, "Synchronized");
  const pullReason =
    sync?.status === "False" && (sync.reason === "ErrImagePull" || sync.reason === "ImagePullBackOff")
      ? sync.reason
      : printable === "ErrImagePull" || printable === "ImagePullBackOff"
        ? printable
        : undefined;
  if (pullReason) {
    const image = imageOf(vm);
    return failed(
      pullReason === "ImagePullBackOff"
        ? notice(
            "image_not_pulled_retrying",
            `The VM's disk image ${image} could not be downloaded; the cluster keeps retrying`,
            { image },
          )
        : notice("image_not_pulled", `The VM's disk image ${image} could not be downloaded`, { image }),
    );
  }

  if (printable === "ErrorPvcNotFound") {
    return failed(notice("disk_missing", "A disk of this VM is missing (PersistentVolumeClaim not found)"));
  }
  if (printable === "DataVolumeError") {
    return failed(notice("disk_not_prepared", "A disk of this VM could not be prepared (DataVolume error)"));
  }
  if (phase === "Unknown") {
    return failed(notice("node_lost", "The cluster lost contact with this VM's node; it may come back"));
  }
  if (!vmi && (vm.spec.runStrategy === "Halted" || vm.spec.running === false)) {
    return failed(notice("stopped_outside", "The VM was stopped outside Lab Console"));
  }
  return ok("starting");
}

/** runStrategy Always (what Lab Console creates, and the deprecated running: true). */
function restartsByItself(vm: VirtualMachine): boolean {
  return vm.spec.runStrategy === "Always" || (vm.spec.runStrategy === undefined && vm.spec.running === true);
}

function whyFailed(vmi: VirtualMachineInstance | undefined): Notice & {
  reason: "node_unresponsive" | "stopped_because" | "stopped_unexpectedly";
} {
  const reason = vmi?.status?.reason;
  if (reason === "NodeUnresponsive") {
    return {
      ...notice("node_unresponsive", "The VM stopped: its node stopped responding"),
      reason: "node_unresponsive",
    };
  }
  return reason
    ? {
        ...notice("stopped_because", `The VM stopped unexpectedly (${reason})`, { cause: reason }),
        reason: "stopped_because",
      }
    : { ...notice("stopped_unexpectedly", "The VM stopped unexpectedly"), reason: "stopped_unexpectedly" };
}

/**
 * The scheduler's message ("0/3 nodes are available: 3 Insufficient memory. preemption: ...") in plain
 * words, with the VM's size so the reader knows what did not fit.
 */
function whyUnschedulable(vm: VirtualMachine, schedulerMessage: string): Notice {
  const size = describeSize(vm);
  if (/Insufficient (cpu|memory)/.test(schedulerMessage))
    return notice("no_room_for_vm", `No node has room for this VM (${size}) right now`, { size });
  if (schedulerMessage.includes("devices.kubevirt.io/kvm"))
    return notice("no_kvm_node", "No node with KVM is free to run this VM right now");
  if (/node affinity|node selector|didn't match/i.test(schedulerMessage)) {
    return notice("no_node_ready", "No node is ready to run VMs right now");
  }
  return notice("cannot_schedule", `No node can run this VM (${size}) right now`, { size });
}

// These two read defensively: a VM someone edited by hand may lack fields our builder always writes.
function describeSize(vm: VirtualMachine): string {
  const domain = vm.spec.template?.spec?.domain;
  const cpu = domain?.cpu;
  const vcpus = (cpu?.cores ?? 1) * (cpu?.sockets ?? 1) * (cpu?.threads ?? 1);
  const memory = domain?.memory?.guest ?? domain?.resources?.requests?.memory;
  return memory ? `${vcpus} vCPU, ${memory}` : `${vcpus} vCPU`;
}

function imageOf(vm: VirtualMachine): string {
  const volumes = vm.spec.template?.spec?.volumes ?? [];
  return volumes.find((volume) => volume.containerDisk)?.containerDisk?.image ?? "(unknown image)";
}

function conditionOf(vmi: VirtualMachineInstance | undefined, type: string): Condition | undefined {
  return vmi?.status?.conditions?.find((condition) => condition.type === type);
}
