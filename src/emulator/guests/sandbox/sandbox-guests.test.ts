// The guests as the emulator runs them: each VMI's guest offers the commands of its containerDisk
// image (the cluster config may declare images), and cloud-init's runcmd comes `toRuncmd` after the
// VMI is Running, as on a booting real guest.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../cluster/objects.ts";
import { runcmdDelayMs, timingsFor } from "../../cluster/timing.ts";
import { vmManifest } from "../../testing/manifests.ts";
import { jsonRequest } from "../../testing/raw-request.ts";
import { eventually, startTestEmulator, type TestEmulator } from "../../testing/start.ts";
import { openStream } from "../../testing/websocket.ts";
import { containerDiskImageOf } from "./sandbox-guests.ts";
import {
  hostCgroupsOf,
  hostEffectiveCgroupLimitsOf,
  hostProcessesRunning,
} from "../testing/host-processes.ts";

const namespace = "lab-sessions";
const vmsPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachines`;
const vmisPath = `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances`;
const consolePath = (name: string) =>
  `/apis/subresources.kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances/${name}/console`;
const bootDelayMs = 1500;

interface Vmi extends KubeObject {
  status?: { phase?: string; conditions?: { type: string }[] };
}

let cluster: TestEmulator;
let runningAt: number;
let agentAt: number;

beforeAll(async () => {
  cluster = await startTestEmulator({
    guests: "sandbox",
    cluster: {
      images: [{ image: "registry.example/minimal:1", commands: ["bash", "sh", "ls", "cat"] }],
      guestLimits: { pids: 200, disk: "96Mi" },
    },
    timings: { toRuncmd: { minMs: bootDelayMs, maxMs: bootDelayMs } },
  });
  const userData = "#cloud-config\nruncmd:\n  - echo runcmd-ran\n";
  await jsonRequest(
    cluster.emulator,
    "POST",
    vmsPath,
    vmManifest("minimal-vm", { image: "registry.example/minimal:1", userData }),
  );
  const vmi = () =>
    jsonRequest(cluster.emulator, "GET", `${vmisPath}/minimal-vm`).then((response) =>
      response.status === 200 ? (response.json as Vmi) : undefined,
    );
  await eventually(async () => ((await vmi())?.status?.phase === "Running" ? true : undefined), {
    what: "the VMI to run",
  });
  runningAt = performance.now();
  await eventually(
    async () =>
      (await vmi())?.status?.conditions?.some((c) => c.type === "AgentConnected") ? true : undefined,
    { timeoutMs: 10_000, what: "the guest agent to connect" },
  );
  agentAt = performance.now();
}, 20_000);

afterAll(async () => {
  await cluster?.close();
});

describe("a VMI's guest", () => {
  it("reaches runcmd toRuncmd after Running, and connects its agent after that", () => {
    expect(agentAt - runningAt).toBeGreaterThanOrEqual(bootDelayMs - 100);
  });

  it("offers only the commands of the image the cluster config declares", async () => {
    const client = await openStream(cluster.emulator, consolePath("minimal-vm"));
    client.send("\r");
    await client.waitFor(/:~\$ $/);
    client.send(
      "for c in ls cat python3 grep; do command -v $c >/dev/null && echo has-$c || echo lacks-$c; done\r",
    );
    await client.waitFor(/\rhas-ls\r\nhas-cat\r\nlacks-python3\r\nlacks-grep\r\n/);
    client.ws.close(1000);
  });
});

describe("a VMI's guest limits", () => {
  it("follow the VMI's memory and vCPUs, and the cluster config's processes and disk", async () => {
    await jsonRequest(
      cluster.emulator,
      "POST",
      vmsPath,
      vmManifest("sized-vm", { memory: "384Mi", cores: 2 }),
    );
    await eventually(
      async () => {
        const response = await jsonRequest(cluster.emulator, "GET", `${vmisPath}/sized-vm`);
        const vmi = response.json as Vmi;
        return vmi.status?.conditions?.some((c) => c.type === "AgentConnected") ? true : undefined;
      },
      { timeoutMs: 10_000, what: "the sized guest's agent" },
    );
    const client = await openStream(cluster.emulator, consolePath("sized-vm"));
    client.send("\r");
    await client.waitFor(/:~\$ $/);
    const marker = `300.${Math.floor(Math.random() * 1e9)}`;
    client.send(`sleep ${marker} & df -k --output=size ~ | tail -1 | sed 's/^/disk-/'\r`);
    await client.waitFor(/\ndisk-\s*98304\r\n/);
    const [student] = await eventually(async () => {
      const found = await hostProcessesRunning(`sleep\0${marker}`);
      return found.length > 0 ? found : undefined;
    });
    client.ws.close(1000);
    expect(await hostEffectiveCgroupLimitsOf(await hostCgroupsOf(student?.pid ?? 0))).toEqual({
      pids: 200,
      memoryBytes: (384 + 96) * 2 ** 20,
      cpuQuotaUs: 200_000,
    });
  });
});

describe("containerDiskImageOf", () => {
  it("is the image of the first containerDisk volume", () => {
    const vmi = {
      apiVersion: "kubevirt.io/v1",
      kind: "VirtualMachineInstance",
      metadata: { name: "x", uid: "u" },
      spec: {
        volumes: [
          { name: "cloudinitdisk", cloudInitNoCloud: { userData: "" } },
          { name: "rootdisk", containerDisk: { image: "quay.io/containerdisks/fedora:41" } },
          { name: "data", containerDisk: { image: "quay.io/other:1" } },
        ],
      },
    } as unknown as KubeObject;
    expect(containerDiskImageOf(vmi)).toBe("quay.io/containerdisks/fedora:41");
    expect(containerDiskImageOf({ ...vmi, spec: {} } as KubeObject)).toBeUndefined();
  });
});

describe("runcmdDelayMs", () => {
  it("spreads realistic timing over 30 to 120 s, the same for the same VMI name", () => {
    const realistic = timingsFor("realistic");
    const names = Array.from({ length: 200 }, (_, index) => `linux-basics-${index.toString(36)}x9`);
    const delays = names.map((name) => runcmdDelayMs(realistic, name));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(30_000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(120_000);
    expect(new Set(delays.map((delay) => Math.floor(delay / 10_000))).size).toBeGreaterThanOrEqual(8);
    expect(names.map((name) => runcmdDelayMs(realistic, name))).toEqual(delays);
  });

  it("is zero with fast timing", () => {
    expect(runcmdDelayMs(timingsFor("fast"), "any-vm")).toBe(0);
  });
});
