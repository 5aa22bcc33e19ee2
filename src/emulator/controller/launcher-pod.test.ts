import { describe, expect, it } from "vitest";
import type { KubeObject } from "../objects.ts";
import {
  buildLauncherPod,
  launcherRequests,
  memoryOverheadBytes,
  serialConsoleLogEnabled,
  vcpuCount,
} from "./launcher-pod.ts";
import { podRequests } from "./scheduler.ts";

const mebibyte = 2 ** 20;

function vmi(domain: Record<string, unknown>, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachineInstance",
    metadata: {
      name: "lab-abc",
      namespace: "lab-sessions",
      uid: "uid-1",
      resourceVersion: "1",
      creationTimestamp: "",
      labels: { "labconsole.dev/session": "lab-abc" },
    },
    spec: { domain, ...extra },
  };
}

describe("KubeVirt's launcher pod resources", () => {
  it("matches KubeVirt's unit test: 1 vCPU / 1Gi with VNC has 290Mi overhead", () => {
    const overhead = memoryOverheadBytes(vmi({ resources: { requests: { memory: "1Gi" } }, devices: {} }));
    expect(overhead / mebibyte).toBeCloseTo(290, 0);
  });

  it("requests vCPUs / cpuAllocationRatio CPU and guest memory plus overhead for 2 vCPU / 4Gi", () => {
    const requests = launcherRequests(
      vmi({ cpu: { cores: 2 }, resources: { requests: { memory: "4Gi" } }, devices: {} }),
      10,
    );
    expect(requests.cpuMillis).toBe(200);
    // 4096Mi + page tables (8Mi) + 240Mi fixed + 2 x 8Mi vCPU + 8Mi IOThread + 32Mi video RAM.
    expect(requests.memoryBytes / mebibyte).toBeCloseTo(4400, 0);
  });

  it("follows cpuAllocationRatio, the graphics device, explicit CPU requests and the topology", () => {
    expect(
      launcherRequests(vmi({ cpu: { cores: 2 }, resources: { requests: { memory: "1Gi" } }, devices: {} }), 4)
        .cpuMillis,
    ).toBe(500);
    expect(
      launcherRequests(vmi({ resources: { requests: { memory: "1Gi", cpu: "1500m" } }, devices: {} }), 10)
        .cpuMillis,
    ).toBe(1500);
    const withoutGraphics = memoryOverheadBytes(
      vmi({ resources: { requests: { memory: "1Gi" } }, devices: { autoattachGraphicsDevice: false } }),
    );
    expect(withoutGraphics / mebibyte).toBeCloseTo(258, 0);
    expect(vcpuCount(vmi({ cpu: { sockets: 2, cores: 2, threads: 2 } }))).toBe(8);
    expect(vcpuCount(vmi({ resources: { limits: { cpu: "3" } } }))).toBe(3);
  });

  it("labels and annotates the pod as virt-controller does", () => {
    const source = vmi({ resources: { requests: { memory: "1Gi" } }, devices: {} });
    const pod = buildLauncherPod(source, launcherRequests(source, 10), {
      kubevirtVersion: "v1.9.0",
      serialConsoleLog: true,
    }) as {
      metadata: { generateName: string; labels: Record<string, string>; annotations: Record<string, string> };
      spec: { initContainers: { name: string; resources: { requests: Record<string, string> } }[] };
    };
    expect(pod.metadata.generateName).toBe("virt-launcher-lab-abc-");
    expect(pod.metadata.labels).toMatchObject({
      "labconsole.dev/session": "lab-abc",
      "kubevirt.io": "virt-launcher",
      "kubevirt.io/created-by": "uid-1",
      "vm.kubevirt.io/name": "lab-abc",
      "vmi.kubevirt.io/id": "lab-abc",
    });
    expect(pod.metadata.annotations["kubevirt.io/domain"]).toBe("lab-abc");
    expect(pod.spec.initContainers[0]).toMatchObject({
      name: "guest-console-log",
      resources: { requests: { cpu: "5m", memory: "35M" } },
    });
  });
});

describe("the guest-console-log sidecar", () => {
  const clusterDefault = {};
  const clusterOff = { virtualMachineOptions: { disableSerialConsoleLog: {} } };
  const withDevices = (devices: Record<string, unknown>) =>
    vmi({ resources: { requests: { memory: "1Gi" } }, devices });

  it("follows KubeVirt's isSerialConsoleLogEnabled: the VMI's setting wins, then the cluster's", () => {
    expect(serialConsoleLogEnabled(withDevices({}), clusterDefault)).toBe(true);
    expect(serialConsoleLogEnabled(withDevices({}), undefined)).toBe(true);
    expect(serialConsoleLogEnabled(withDevices({}), clusterOff)).toBe(false);
    expect(serialConsoleLogEnabled(withDevices({ logSerialConsole: true }), clusterOff)).toBe(true);
    expect(serialConsoleLogEnabled(withDevices({ logSerialConsole: false }), clusterDefault)).toBe(false);
    expect(
      serialConsoleLogEnabled(withDevices({}), { virtualMachineOptions: { disableSerialConsoleLog: null } }),
    ).toBe(true);
  });

  it("is never there without a serial console, whatever logSerialConsole says", () => {
    const noConsole = withDevices({ autoattachSerialConsole: false, logSerialConsole: true });
    expect(serialConsoleLogEnabled(noConsole, clusterDefault)).toBe(false);
    expect(serialConsoleLogEnabled(withDevices({ autoattachSerialConsole: true }), clusterDefault)).toBe(
      true,
    );
  });

  it("leaves the pod, and what it asks of a node, without the sidecar when logging is off", () => {
    const source = withDevices({});
    const requests = launcherRequests(source, 10);
    const build = (serialConsoleLog: boolean) =>
      buildLauncherPod(source, requests, {
        kubevirtVersion: "v1.9.0",
        serialConsoleLog,
      }) as unknown as KubeObject;
    const withLog = build(true);
    const withoutLog = build(false);
    expect(withoutLog).not.toHaveProperty(["spec", "initContainers"]);
    expect(podRequests(withLog).cpuMillis - podRequests(withoutLog).cpuMillis).toBe(5);
    expect(podRequests(withLog).memoryBytes - podRequests(withoutLog).memoryBytes).toBe(35e6);
    expect(podRequests(withoutLog)).toMatchObject({
      cpuMillis: requests.cpuMillis,
      memoryBytes: requests.memoryBytes,
    });
  });
});
