// pause and unpause over the wire, with a real guest: KubeVirt v1.9.0's refusals and words
// (pkg/virt-api/rest/lifecycle.go), the Paused condition and printableStatus, a console that still
// connects but gets no answer while port-forward is refused, and guest processes that really stop.
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../cluster/objects.ts";
import { hostProcessesRunning } from "../guests/testing/host-processes.ts";
import { vmManifest } from "../testing/manifests.ts";
import { jsonRequest, rawRequest } from "../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../testing/start.ts";
import { openStream, UpgradeRefused } from "../testing/websocket.ts";

const namespace = "lab-sessions";
const vmsPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`;
const vmisPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances`;
const subresource = (name: string, what: string) =>
  `/apis/subresources.kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/${name}/${what}`;

interface Vmi extends KubeObject {
  status?: { phase?: string; conditions?: { type: string; status: string; reason?: string }[] };
}

let cluster: TestEmulator;

async function vmi(name: string): Promise<Vmi | undefined> {
  const response = await jsonRequest(cluster.emulator, "GET", `${vmisPath}/${name}`);
  return response.status === 200 ? (response.json as Vmi) : undefined;
}

async function put(name: string, what: "pause" | "unpause", body?: unknown) {
  return jsonRequest(cluster.emulator, "PUT", subresource(name, what), body);
}

/** The state letter of /proc/PID/stat: T while stopped. */
async function processState(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? "";
}

beforeAll(async () => {
  // virt-handler's sync lags the domain by seconds here, and a second of a grace period is a tenth of
  // one: both moments are there to see.
  cluster = await startTestEmulator({
    guests: "sandbox",
    timings: { toPausedCondition: 3_000, gracePeriodSecond: 100 },
  });
  await jsonRequest(cluster.emulator, "POST", vmsPath, vmManifest("paused-vm"));
  await eventually(
    async () =>
      (await vmi("paused-vm"))?.status?.conditions?.some((c) => c.type === "AgentConnected")
        ? true
        : undefined,
    { timeoutMs: 15_000, what: "the guest agent to connect" },
  );
}, 30_000);

afterAll(async () => {
  await cluster?.close();
});

describe("pause and unpause", () => {
  it("refuse what KubeVirt refuses, in its words", async () => {
    const missing = await put("no-such-vmi", "pause");
    expect(missing.status).toBe(404);
    expect((missing.json as { message: string }).message).toBe(
      'virtualmachineinstance.kubevirt.io "no-such-vmi" not found',
    );
    const notPaused = await put("paused-vm", "unpause");
    expect(notPaused.status).toBe(409);
    expect((notPaused.json as { message: string }).message).toBe(
      'Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "paused-vm": VMI is not paused',
    );
    const get = await rawRequest(cluster.emulator, "GET", subresource("paused-vm", "pause"));
    expect(get.status).toBe(405);
    // A dry run validates and changes nothing.
    expect((await put("paused-vm", "pause", { dryRun: ["All"] })).status).toBe(200);
    expect((await vmi("paused-vm"))?.status?.conditions?.some((c) => c.type === "Paused")).toBe(false);
  });

  it("stops the guest's processes, shows Paused, refuses port-forward, and runs them again", async () => {
    const marker = `300.${Math.floor(Math.random() * 1e9)}`;
    const console = await openStream(cluster.emulator, subresource("paused-vm", "console"));
    console.send("\r");
    await console.waitFor(/:~\$ $/);
    console.send(`sleep ${marker} &\r`);
    const [sleeper] = await eventually(async () => {
      const found = await hostProcessesRunning(`sleep\0${marker}`);
      return found.length > 0 ? found : undefined;
    });
    const pid = sleeper?.pid ?? 0;
    console.ws.close(1000);

    const paused = await put("paused-vm", "pause", {});
    expect(paused.status).toBe(200);
    expect(await processState(pid)).toBe("T");
    // virt-api answers once the domain is paused; the condition waits for virt-handler's next sync.
    expect(pausedCondition(await vmi("paused-vm"))).toBeUndefined();
    const condition = await eventually(async () => pausedCondition(await vmi("paused-vm")), {
      what: "the Paused condition",
    });
    expect(condition).toMatchObject({ status: "True", reason: "PausedByUser" });
    await eventually(async () => {
      const vm = await jsonRequest(cluster.emulator, "GET", `${vmsPath}/paused-vm`);
      return (vm.json as { status?: { printableStatus?: string } }).status?.printableStatus === "Paused"
        ? true
        : undefined;
    });

    const again = await put("paused-vm", "pause");
    expect(again.status).toBe(409);
    expect((again.json as { message: string }).message).toContain("VMI is already paused");
    const forward = openStream(cluster.emulator, subresource("paused-vm", "portforward") + "/899/tcp");
    const refusal = await forward.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(UpgradeRefused);
    expect((refusal as UpgradeRefused).status).toBe(409);
    expect((refusal as UpgradeRefused).body).toContain("VMI is paused");

    // The console still connects, as virt-api's validateVMIForConsole lets it, but nothing answers.
    const quiet = await openStream(cluster.emulator, subresource("paused-vm", "console"));
    quiet.send("echo aw''ake\r");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(quiet.text).not.toContain("awake");

    expect((await put("paused-vm", "unpause", {})).status).toBe(200);
    expect(await processState(pid)).not.toBe("T");
    // Until virt-handler's sync the VMI still says paused, and port-forward still refuses.
    expect(pausedCondition(await vmi("paused-vm"))).toBeDefined();
    const stillRefused = await openStream(
      cluster.emulator,
      subresource("paused-vm", "portforward") + "/899/tcp",
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((stillRefused as UpgradeRefused).status).toBe(409);
    await eventually(async () => (pausedCondition(await vmi("paused-vm")) ? undefined : true), {
      what: "the Paused condition to go",
    });
    // What was typed while paused waited in the line and runs now.
    await quiet.waitFor("awake");
    quiet.ws.close(1000);
  });
});

describe("a paused VMI deleted", () => {
  it("waits out its grace period, since the paused guest cannot act on the shutdown", async () => {
    await jsonRequest(cluster.emulator, "POST", vmsPath, vmManifest("ending-vm", { runStrategy: "Once" }));
    await eventually(async () => ((await vmi("ending-vm"))?.status?.phase === "Running" ? true : undefined), {
      timeoutMs: 15_000,
      what: "the VMI to run",
    });
    expect((await put("ending-vm", "pause", {})).status).toBe(200);
    const deletedAt = performance.now();
    expect((await jsonRequest(cluster.emulator, "DELETE", `${vmisPath}/ending-vm`)).status).toBe(200);
    await eventually(async () => ((await vmi("ending-vm")) ? undefined : true), {
      timeoutMs: 15_000,
      what: "the VMI to go",
    });
    // KubeVirt's default grace period, 30 s, at this emulator's 100 ms a second.
    expect(performance.now() - deletedAt).toBeGreaterThanOrEqual(30 * 100);
  });
});

function pausedCondition(vmi: Vmi | undefined) {
  return vmi?.status?.conditions?.find((c) => c.type === "Paused");
}
