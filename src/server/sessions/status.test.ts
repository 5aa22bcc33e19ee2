import { describe, expect, it } from "vitest";
import { Session, type SessionStatus } from "../../common/api.ts";
import type { VirtualMachineInstancePhase, VirtualMachinePrintableStatus } from "../kube/types.ts";
import { annotationKeys, labelKeys } from "./labels.ts";
import { toSession } from "./status.ts";
import {
  aSessionVm,
  aSessionVmi,
  createdAt,
  expiresAt,
  notSynchronized,
  unschedulable,
} from "./testing/fixtures.ts";

const schedulerNoRoom =
  "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, " +
  "2 Insufficient memory. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, " +
  "2 No preemption victims found for incoming pod.";

describe("toSession", () => {
  it("takes id, lab, owner, times and extensions from the VM and the timeline from the VMI", () => {
    const session = toSession(
      aSessionVm({ printableStatus: "Running", extensions: "2" }),
      aSessionVmi("Running"),
    );
    expect(Session.parse(session)).toEqual(session);
    expect(session).toEqual({
      id: "linux-basics-x7k2m9qa",
      labId: "linux-basics",
      owner: "ana@example.edu",
      section: null,
      status: "running",
      phase: "Running",
      createdAt,
      expiresAt,
      extensions: 2,
      timeline: [
        { phase: "Pending", at: "2026-08-22T10:00:00Z" },
        { phase: "Scheduling", at: "2026-08-22T10:00:00Z" },
        { phase: "Scheduled", at: "2026-08-22T10:00:10Z" },
        { phase: "Running", at: "2026-08-22T10:00:20Z" },
      ],
      message: null,
      notice: null,
      start: "cold",
    });
  });

  it("is in the section its VM's label names", () => {
    const vm = aSessionVm({ printableStatus: "Running" });
    vm.metadata.labels = { ...vm.metadata.labels, [labelKeys.section]: "a" };
    expect(toSession(vm, aSessionVmi("Running")).section).toBe("a");
  });

  it("starts at the claim for a warm VM a launch claimed", () => {
    const vm = aSessionVm({ printableStatus: "Running" });
    vm.metadata.annotations = {
      ...vm.metadata.annotations,
      [annotationKeys.claimedAt]: "2026-08-22T10:30:00.000Z",
    };
    expect(toSession(vm, aSessionVmi("Running"))).toMatchObject({
      createdAt: "2026-08-22T10:30:00.000Z",
      start: "warm",
    });
  });

  it("is starting with no phase and no timeline while the VMI does not exist yet", () => {
    const session = toSession(aSessionVm({ printableStatus: "Starting" }), undefined);
    expect(session).toMatchObject({
      status: "starting",
      phase: "",
      timeline: [],
      message: null,
      extensions: 0,
    });
  });

  it("counts a damaged extensions annotation as no extension", () => {
    expect(toSession(aSessionVm({ extensions: "many" }), undefined).extensions).toBe(0);
    expect(toSession(aSessionVm({ extensions: "-1" }), undefined).extensions).toBe(0);
  });

  // Each VMI phase with a VM status that virt-controller would show beside it.
  const byPhase: [VirtualMachineInstancePhase, VirtualMachinePrintableStatus, SessionStatus][] = [
    ["", "Starting", "starting"],
    ["Pending", "Starting", "starting"],
    ["Scheduling", "Starting", "starting"],
    ["Scheduled", "Starting", "starting"],
    ["Running", "Running", "running"],
    ["Succeeded", "Stopped", "stopping"],
    // runStrategy Always: virt-controller replaces a VMI that failed after it ran.
    ["Failed", "Stopped", "starting"],
    ["Unknown", "Unknown", "failed"],
    ["WaitingForSync", "WaitingForReceiver", "starting"],
  ];
  it.each(byPhase)("VMI phase %j (VM %s) is %s", (phase, printableStatus, status) => {
    const session = toSession(aSessionVm({ printableStatus }), aSessionVmi(phase));
    expect(session.status).toBe(status);
    expect(session.phase).toBe(phase);
    expect(session.message === null).toBe(status !== "failed" && phase !== "Failed");
  });

  // Each printableStatus as the VM alone reports it (no VMI, or a VMI that says nothing more).
  const byPrintableStatus: [VirtualMachinePrintableStatus, SessionStatus, string | null][] = [
    ["Stopped", "starting", null],
    ["Provisioning", "starting", null],
    ["Starting", "starting", null],
    ["Running", "starting", null],
    ["Paused", "starting", null],
    ["Stopping", "stopping", null],
    ["Terminating", "stopping", null],
    [
      "CrashLoopBackOff",
      "failed",
      "The VM failed to start 3 times in a row; the cluster keeps retrying. The cause is in the cluster, not the lab: an operator can find it with Lab Console's doctor",
    ],
    ["Migrating", "starting", null],
    ["Unknown", "starting", null],
    ["ErrorUnschedulable", "failed", "No node can run this VM (2 vCPU, 4Gi) right now"],
    [
      "ErrImagePull",
      "failed",
      "The VM's disk image quay.io/containerdisks/fedora:41 could not be downloaded",
    ],
    [
      "ImagePullBackOff",
      "failed",
      "The VM's disk image quay.io/containerdisks/fedora:41 could not be downloaded; the cluster keeps retrying",
    ],
    ["ErrorPvcNotFound", "failed", "A disk of this VM is missing (PersistentVolumeClaim not found)"],
    ["DataVolumeError", "failed", "A disk of this VM could not be prepared (DataVolume error)"],
    ["WaitingForVolumeBinding", "starting", null],
    ["WaitingForReceiver", "starting", null],
  ];
  it.each(byPrintableStatus)("VM %s without a VMI is %s", (printableStatus, status, message) => {
    const session = toSession(aSessionVm({ printableStatus, consecutiveFailCount: 3 }), undefined);
    expect({ status: session.status, message: session.message }).toEqual({ status, message });
  });

  it("trusts a running VMI over a VM status that has not caught up", () => {
    for (const printableStatus of ["ErrImagePull", "ErrorUnschedulable", "Starting"] as const) {
      expect(toSession(aSessionVm({ printableStatus }), aSessionVmi("Running")).status).toBe("running");
    }
  });

  it("is running but says so when the VM is paused or migrating", () => {
    const paused = toSession(aSessionVm({ printableStatus: "Paused" }), aSessionVmi("Running"));
    expect(paused.status).toBe("running");
    expect(paused.message).toMatch(/paused/);
    const pausedCondition = aSessionVmi("Running", {
      conditions: [{ type: "Paused", status: "True", reason: "PausedByUser" }],
    });
    expect(toSession(aSessionVm({ printableStatus: "Running" }), pausedCondition).message).toMatch(/paused/);
    const migrating = toSession(aSessionVm({ printableStatus: "Migrating" }), aSessionVmi("Running"));
    expect(migrating).toMatchObject({ status: "running", message: null });
  });

  it("explains a full cluster with the VM's size, from the VMI's PodScheduled condition", () => {
    const vmi = aSessionVmi("Scheduling", { conditions: [unschedulable(schedulerNoRoom)] });
    const session = toSession(aSessionVm({ printableStatus: "Starting" }), vmi);
    expect(session).toMatchObject({
      status: "failed",
      phase: "Scheduling",
      message: "No node has room for this VM (2 vCPU, 4Gi) right now",
    });
  });

  it("tells missing KVM and unready nodes apart from a full cluster", () => {
    const noKvm = aSessionVmi("Scheduling", {
      conditions: [unschedulable("0/2 nodes are available: 2 Insufficient devices.kubevirt.io/kvm.")],
    });
    expect(toSession(aSessionVm(), noKvm).message).toBe("No node with KVM is free to run this VM right now");
    const noHandler = aSessionVmi("Scheduling", {
      conditions: [
        unschedulable("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."),
      ],
    });
    expect(toSession(aSessionVm(), noHandler).message).toBe("No node is ready to run VMs right now");
  });

  it("reports an image that cannot be pulled from the VMI's Synchronized condition", () => {
    const vmi = aSessionVmi("Scheduling", {
      conditions: [
        notSynchronized("ErrImagePull", 'failed to pull image "quay.io/containerdisks/fedora:41"'),
      ],
    });
    const session = toSession(aSessionVm({ printableStatus: "Starting" }), vmi);
    expect(session.status).toBe("failed");
    expect(session.message).toMatch(/quay\.io\/containerdisks\/fedora:41 could not be downloaded$/);
  });

  it("says why a VMI failed, and that runStrategy Always brings it back", () => {
    const manual = aSessionVm({ printableStatus: "Stopped", runStrategy: "Manual" });
    expect(toSession(manual, aSessionVmi("Failed", { reason: "NodeUnresponsive" }))).toMatchObject({
      status: "failed",
      message: "The VM stopped: its node stopped responding",
    });
    expect(toSession(manual, aSessionVmi("Failed", { reason: "PodFailed" })).message).toBe(
      "The VM stopped unexpectedly (PodFailed)",
    );
    const always = aSessionVm({ printableStatus: "Stopped" });
    expect(toSession(always, aSessionVmi("Failed", { reason: "NodeUnresponsive" }))).toMatchObject({
      status: "starting",
      message: "The VM stopped: its node stopped responding; the cluster is starting it again",
    });
  });

  it("keeps a crashed VM starting while virt-controller deletes its failed VMI", () => {
    const vm = aSessionVm({ printableStatus: "Stopped" });
    const beingReplaced = aSessionVmi("Failed", { deletionTimestamp: "2026-08-22T10:30:00Z" });
    expect(toSession(vm, beingReplaced).status).toBe("starting");
  });

  it("tells a failed start from a crash: failed when it fails again, starting while it retries", () => {
    const vm = aSessionVm({ printableStatus: "Stopped", consecutiveFailCount: 2 });
    expect(toSession(vm, aSessionVmi("Failed"))).toMatchObject({
      status: "failed",
      message: expect.stringMatching(/^The VM failed to start 2 times in a row; the cluster keeps retrying/),
    });
    expect(
      toSession({ ...vm, status: { ...vm.status, printableStatus: "Starting" } }, aSessionVmi("Scheduling")),
    ).toEqual(
      expect.objectContaining({
        status: "starting",
        message: "The VM failed to start 2 times in a row; the cluster is trying again",
      }),
    );
  });

  it("is stopping while the VM or the VMI is being deleted, whatever else it shows", () => {
    const deleting = { deletionTimestamp: "2026-08-22T10:30:00Z" };
    expect(
      toSession(aSessionVm({ ...deleting, printableStatus: "Running" }), aSessionVmi("Running")).status,
    ).toBe("stopping");
    expect(toSession(aSessionVm({ ...deleting, printableStatus: "ErrImagePull" }), undefined).status).toBe(
      "stopping",
    );
    expect(
      toSession(aSessionVm({ printableStatus: "Running" }), aSessionVmi("Running", deleting)).status,
    ).toBe("stopping");
  });

  it("is starting, not stopping, while a restart replaces the VMI, unless the VM is being deleted", () => {
    const restart = [{ action: "Stop", uid: "old-uid" }, { action: "Start" }];
    const restarting = aSessionVm({ printableStatus: "Stopping" });
    restarting.status = { ...restarting.status, stateChangeRequests: restart };
    const tearingDown = aSessionVmi("Running", { deletionTimestamp: "2026-08-22T10:30:00Z" });
    expect(toSession(restarting, tearingDown)).toMatchObject({
      status: "starting",
      message: "The VM is restarting",
    });
    const ended = aSessionVm({ printableStatus: "Stopping", deletionTimestamp: "2026-08-22T10:30:00Z" });
    ended.status = { ...ended.status, stateChangeRequests: restart };
    expect(toSession(ended, tearingDown).status).toBe("stopping");
  });

  it("calls a VM halted outside Lab Console failed rather than starting forever", () => {
    const halted = toSession(aSessionVm({ printableStatus: "Stopped", runStrategy: "Halted" }), undefined);
    expect(halted).toMatchObject({ status: "failed", message: "The VM was stopped outside Lab Console" });
  });

  it("gives no count for a single start failure", () => {
    const session = toSession(
      aSessionVm({ printableStatus: "CrashLoopBackOff", consecutiveFailCount: 1 }),
      undefined,
    );
    expect(session.message).toMatch(/^The VM failed to start; the cluster keeps retrying\./);
  });
});
