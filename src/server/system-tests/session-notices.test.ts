// The BFF names what is wrong with a session twice: an English message for API clients and a notice
// (a reason with parameters) that the SPA says from its catalogs. Both must say the same, and every
// reason the SPA has words for must be one the BFF can give.
import { describe, expect, it } from "vitest";
import { sessionNoticeReasons, type Session } from "../../common/api.ts";
import type { VirtualMachine, VirtualMachineInstance } from "../kube/types.ts";
import { toSession } from "../sessions/status.ts";
import { aSessionVm, aSessionVmi, notSynchronized, unschedulable } from "../sessions/testing/fixtures.ts";
import { createI18n } from "../../web/lib/i18n/create-i18n.ts";

function restarting(): VirtualMachine {
  const vm = aSessionVm({ printableStatus: "Stopping" });
  vm.status = { ...vm.status, stateChangeRequests: [{ action: "Stop", uid: "old" }, { action: "Start" }] };
  return vm;
}

function paused(): VirtualMachine {
  return aSessionVm({ printableStatus: "Paused" });
}

const manual = () => aSessionVm({ printableStatus: "Stopped", runStrategy: "Manual" });
const always = () => aSessionVm({ printableStatus: "Stopped" });
const scheduling = (message: string) => aSessionVmi("Scheduling", { conditions: [unschedulable(message)] });

const states: [string, VirtualMachine, VirtualMachineInstance | undefined][] = [
  ["a restart", restarting(), aSessionVmi("Running", { deletionTimestamp: "2026-08-22T10:30:00Z" })],
  ["a retried start", aSessionVm({ consecutiveFailCount: 1 }), aSessionVmi("Scheduling")],
  ["retried starts", aSessionVm({ consecutiveFailCount: 3 }), aSessionVmi("Scheduling")],
  [
    "a failing start",
    aSessionVm({ printableStatus: "CrashLoopBackOff", consecutiveFailCount: 2 }),
    undefined,
  ],
  ["a pause", paused(), aSessionVmi("Running")],
  ["a lost node", manual(), aSessionVmi("Failed", { reason: "NodeUnresponsive" })],
  ["a crash", manual(), aSessionVmi("Failed")],
  ["a crash with a reason", manual(), aSessionVmi("Failed", { reason: "PodFailed" })],
  ["a lost node, restarted", always(), aSessionVmi("Failed", { reason: "NodeUnresponsive" })],
  ["a crash, restarted", always(), aSessionVmi("Failed")],
  ["a crash with a reason, restarted", always(), aSessionVmi("Failed", { reason: "PodFailed" })],
  ["a full cluster", aSessionVm(), scheduling("0/3 nodes are available: 3 Insufficient memory.")],
  ["no KVM", aSessionVm(), scheduling("0/2 nodes are available: 2 Insufficient devices.kubevirt.io/kvm.")],
  [
    "no ready node",
    aSessionVm(),
    scheduling("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."),
  ],
  ["no node at all", aSessionVm({ printableStatus: "ErrorUnschedulable" }), undefined],
  [
    "an image not pulled",
    aSessionVm(),
    aSessionVmi("Scheduling", { conditions: [notSynchronized("ErrImagePull", "not found")] }),
  ],
  [
    "an image still not pulled",
    aSessionVm(),
    aSessionVmi("Scheduling", { conditions: [notSynchronized("ImagePullBackOff", "not found")] }),
  ],
  ["a missing disk", aSessionVm({ printableStatus: "ErrorPvcNotFound" }), undefined],
  ["a disk not prepared", aSessionVm({ printableStatus: "DataVolumeError" }), undefined],
  ["an unknown phase", aSessionVm({ printableStatus: "Unknown" }), aSessionVmi("Unknown")],
  ["a VM halted by hand", aSessionVm({ printableStatus: "Stopped", runStrategy: "Halted" }), undefined],
];

describe("session notices", () => {
  const sessions: [string, Session][] = states.map(([name, vm, vmi]) => [name, toSession(vm, vmi)]);

  it.each(sessions)("say in English what the message says: %s", async (_name, session) => {
    const { t } = await createI18n("en");
    expect(session.notice).not.toBeNull();
    const { reason, params } = session.notice ?? { reason: "", params: {} };
    expect(t(`sessions.notices.${reason}` as "sessions.notices.paused", params)).toBe(session.message);
  });

  it("cover every reason the SPA has words for", () => {
    const given = new Set(sessions.map(([, session]) => session.notice?.reason));
    expect(sessionNoticeReasons.filter((reason) => !given.has(reason))).toEqual([]);
  });

  it("are absent when nothing is wrong", () => {
    const running = toSession(aSessionVm({ printableStatus: "Running" }), aSessionVmi("Running"));
    expect(running).toMatchObject({ message: null, notice: null });
  });
});
