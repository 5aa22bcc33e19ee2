import { describe, expect, it } from "vitest";
import type { KubeObject } from "../cluster/objects.ts";
import { formatBytes } from "../../common/quantity.ts";
import { buildLauncherPod, launcherRequests, serialConsoleLogEnabled } from "./launcher-pod.ts";
import {
  guestMemoryRequestBytes,
  memoryOverheadBytes,
  publishedMemoryOverhead,
  vcpuCount,
} from "../cluster/memory-overhead.ts";
import { podRequests } from "./scheduler.ts";
import { mutateNewVmi } from "../apiserver/admission/vmi-mutator.ts";
import { vmiFromTemplate } from "./vm-controller.ts";
import { withContainerDisks } from "./container-disks.ts";
import { runningPodStatus } from "./launcher-pod-status.ts";

const mebibyte = 2 ** 20;
const gibibyte = 2 ** 30;

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
  // KubeVirt v1.9.0's hypervisorbackend_test.go: 7Mi "base" + 223Mi "static" + 32Mi video RAM + 8Mi per
  // vCPU. Its split differs (page tables 2Mi, fixed 220Mi, IOThread 8Mi), the sum is the same.
  it("matches KubeVirt v1.9.0's unit test: 1 vCPU / 1Gi with VNC has 270Mi overhead", () => {
    const overhead = memoryOverheadBytes(vmi({ resources: { requests: { memory: "1Gi" } }, devices: {} }));
    expect(overhead).toBe(270 * mebibyte);
  });

  it("gives Lab Console's 2 vCPU / 4Gi VM (memory.guest and the request both set) 200m and 4592762881 bytes", () => {
    const labConsoleVm = vmi({
      cpu: { cores: 2, sockets: 1, threads: 1 },
      memory: { guest: "4Gi" },
      resources: { requests: { memory: "4Gi" } },
      devices: {},
    });
    const requests = launcherRequests(labConsoleVm, 10);
    expect(requests.cpuMillis).toBe(200);
    // Page tables as Go computes them (ceil(4Gi / 1000) kB / 512 = 8,388,609 B) + 220Mi fixed
    // + 2 x 8Mi vCPU + 8Mi IOThread + 32Mi video RAM: 297,795,585 B, about 284Mi.
    expect(requests.overheadBytes).toBe(8_388_609 + 276 * mebibyte);
    expect(requests.memoryBytes).toBe(4_592_762_881);
    const pod = buildLauncherPod(labConsoleVm, requests, {
      kubevirtVersion: "v1.9.0",
      serialConsoleLog: true,
    }) as {
      metadata: { annotations: Record<string, string> };
      spec: { containers: { resources: { requests: Record<string, string> } }[] };
    };
    expect(pod.spec.containers[0]?.resources.requests.memory).toBe("4592762881");
    expect(pod.metadata.annotations["kubevirt.io/memory-overhead-bytes"]).toBe("297795585");
  });

  it("sizes a guest-only VM from memory.guest with no page tables: 4Gi + 276Mi = 4372Mi, as measured", () => {
    const vm = {
      ...vmi({}),
      kind: "VirtualMachine",
      spec: {
        template: {
          spec: { domain: { cpu: { cores: 2 }, memory: { guest: "4Gi" }, devices: {} } },
        },
      },
    };
    const fromTemplate = mutateNewVmi(vmiFromTemplate(vm)) as unknown as KubeObject;
    // The mutator does not copy memory.guest into the request (pkg/defaults/defaults.go).
    expect(fromTemplate).not.toHaveProperty(["spec", "domain", "resources", "requests", "memory"]);
    const requests = launcherRequests(fromTemplate, 10);
    expect(requests.overheadBytes).toBe(276 * mebibyte);
    expect(formatBytes(requests.memoryBytes)).toBe("4372Mi");
  });

  it("defaults memory.guest from the request or the limit, and sizes the pod from the limit when no request is set", () => {
    const template = (domain: Record<string, unknown>) =>
      mutateNewVmi(
        vmiFromTemplate({ ...vmi({}), kind: "VirtualMachine", spec: { template: { spec: { domain } } } }),
      );
    expect(template({ resources: { requests: { memory: "2Gi" } } })).toHaveProperty(
      ["spec", "domain", "memory", "guest"],
      "2Gi",
    );
    expect(template({ resources: { limits: { memory: "3Gi" } } })).toHaveProperty(
      ["spec", "domain", "memory", "guest"],
      "3Gi",
    );
    const limitOnly = vmi({ resources: { limits: { memory: "1Gi" } }, devices: {} });
    // renderresources.go WithMemoryRequests: the limit stands in for the request, but the page tables
    // still come from the (absent) request.
    expect(launcherRequests(limitOnly, 10).memoryBytes).toBe(gibibyte + 268 * mebibyte);
    expect(guestMemoryRequestBytes(vmi({ memory: { guest: "1Gi" } }), 50)).toBe(2 * gibibyte);
  });

  it("applies additionalGuestMemoryOverheadRatio as MultiplyMemory does, to whole kilobytes", () => {
    const domain = { cpu: { cores: 2 }, resources: { requests: { memory: "4Gi" } }, devices: {} };
    const plain = memoryOverheadBytes(vmi(domain));
    // ceil(297,795,585 / 1000) = 297,796 kB, times 0.5 = 148,898 kB added.
    expect(memoryOverheadBytes(vmi(domain), "1.5")).toBe(plain + 148_898_000);
    expect(memoryOverheadBytes(vmi(domain), "not a number")).toBe(plain);
    expect(memoryOverheadBytes(vmi(domain), "")).toBe(plain);
  });

  it("publishes the overhead in the VMI status as virt-controller copies it from the pod's annotation", () => {
    const pod = (annotations: Record<string, string>) => ({
      ...vmi({}),
      metadata: { ...vmi({}).metadata, annotations },
    });
    expect(publishedMemoryOverhead(pod({ "kubevirt.io/memory-overhead-bytes": "297795585" }))).toBe(
      "297795585",
    );
    expect(publishedMemoryOverhead(pod({ "kubevirt.io/memory-overhead-bytes": "283115520" }))).toBe("270Mi");
    expect(publishedMemoryOverhead(pod({ "kubevirt.io/memory-overhead-bytes": "a lot" }))).toBeUndefined();
    expect(publishedMemoryOverhead(pod({}))).toBeUndefined();
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
    const graphics = (autoattachGraphicsDevice?: boolean) =>
      memoryOverheadBytes(
        vmi({
          resources: { requests: { memory: "1Gi" } },
          devices: autoattachGraphicsDevice === undefined ? {} : { autoattachGraphicsDevice },
        }),
      );
    // Video RAM is counted when autoattachGraphicsDevice is unset or true.
    expect(graphics(false)).toBe(238 * mebibyte);
    expect(graphics(true)).toBe(270 * mebibyte);
    expect(graphics()).toBe(270 * mebibyte);
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

describe("a running launcher pod's init containers", () => {
  // The kubelet runs ordinary init containers to completion before the pod's containers start, and
  // keeps a sidecar (restartPolicy Always, KubeVirt's guest-console-log) running beside them
  // (kubernetes pkg/kubelet/kuberuntime/kuberuntime_container.go, computeInitContainerActions). Seen
  // on a real API server: with every init container "running", kubectl printed the pod as Init:1/3.
  it("shows the container-disk ones Completed and only the console-log sidecar running", () => {
    const withDisk = vmi(
      { resources: { requests: { memory: "1Gi" } }, devices: {} },
      { volumes: [{ name: "rootdisk", containerDisk: { image: "quay.io/containerdisks/fedora:41" } }] },
    );
    const built = buildLauncherPod(withDisk, launcherRequests(withDisk, 10), {
      kubevirtVersion: "v1.9.0",
      serialConsoleLog: true,
    });
    const launcherImage = "quay.io/kubevirt/virt-launcher:v1.9.0";
    const pod = withContainerDisks(built, withDisk, { imageVolumes: false, launcherImage }) as KubeObject;
    const status = runningPodStatus(pod, "10.244.0.2", launcherImage);
    const states = (
      status.initContainerStatuses as {
        name: string;
        ready: boolean;
        state: Record<string, { reason?: string; exitCode?: number }>;
      }[]
    ).map((item) => [item.name, Object.keys(item.state)[0], item.state.terminated?.reason ?? "", item.ready]);
    expect(states).toEqual([
      ["guest-console-log", "running", "", true],
      ["container-disk-binary", "terminated", "Completed", false],
      ["volumerootdisk-init", "terminated", "Completed", false],
    ]);
  });
});
