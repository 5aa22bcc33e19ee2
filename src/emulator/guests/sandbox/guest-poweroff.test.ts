// A guest that powers its machine off, as KubeVirt sees one: QEMU exits, the VMI succeeds, and under
// runStrategy Always virt-controller starts a new VMI, which boots from a fresh disk with its user
// data again (pkg/virt-controller/watch/vm/vm.go at v1.9.0). Only root may: the student is told what
// logind tells a user without a seat of their own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../cluster/objects.ts";
import { vmManifest } from "../../testing/manifests.ts";
import { jsonRequest } from "../../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../../testing/start.ts";
import { openStream } from "../../testing/websocket.ts";

const namespace = "lab-sessions";
const vmisPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances`;
const consolePath = `/apis/subresources.kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/power-vm/console`;
// Root powers the VM off once the student asks by making this file (the sandbox's student cannot sudo).
const userData = `#cloud-config
runcmd:
  - [sh, -c, "nohup sh -c 'while [ ! -e /home/student/off ]; do sleep 0.1; done; poweroff' >/dev/null 2>&1 &"]
`;

interface Vmi extends KubeObject {
  status?: { phase?: string; conditions?: { type: string }[] };
}

let cluster: TestEmulator;

async function runningVmi(): Promise<Vmi | undefined> {
  const answer = await jsonRequest(cluster.emulator, "GET", `${vmisPath}/power-vm`);
  const vmi = answer.json as Vmi;
  const agent = vmi.status?.conditions?.some((c) => c.type === "AgentConnected");
  return answer.status === 200 && vmi.status?.phase === "Running" && agent ? vmi : undefined;
}

beforeAll(async () => {
  cluster = await startTestEmulator({ guests: "sandbox" });
  const vms = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`;
  await jsonRequest(
    cluster.emulator,
    "POST",
    vms,
    vmManifest("power-vm", { userData, image: "quay.io/containerdisks/fedora:41" }),
  );
  await eventually(runningVmi, { timeoutMs: 20_000, what: "the VMI to run" });
}, 30_000);

afterAll(async () => {
  await cluster?.close();
});

describe("a guest's poweroff", () => {
  it("is refused to the student", async () => {
    const console = await openStream(cluster.emulator, consolePath);
    console.send("poweroff; echo exit-$?\r");
    const text = await console.waitFor(/exit-\d+/);
    expect(text).toContain("Call to PowerOff failed: Interactive authentication required.");
    expect(text).toContain("exit-1");
    console.ws.close();
    expect(await runningVmi()).toBeDefined();
  });

  it("by root ends the VMI, which succeeds, and runStrategy Always boots a new one", async () => {
    const before = (await runningVmi())?.metadata.uid;
    const console = await openStream(cluster.emulator, consolePath);
    console.send("touch ~/off\r");
    await console.waitFor("reboot: Power down");
    expect(await console.closed).toBe(1006);

    const after = await eventually(
      async () => {
        const vmi = await runningVmi();
        return vmi && vmi.metadata.uid !== before ? vmi : undefined;
      },
      { timeoutMs: 20_000, what: "a new VMI running" },
    );
    expect(after.metadata.uid).not.toBe(before);
    const events = await jsonRequest(cluster.emulator, "GET", `/api/v1/namespaces/${namespace}/events`);
    const shutDown = (
      events.json as { items: { involvedObject: { uid: string }; reason: string }[] }
    ).items.find((event) => event.involvedObject.uid === before && event.reason === "Stopped");
    expect(shutDown).toBeDefined();
  }, 40_000);
});
