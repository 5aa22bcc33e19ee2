// The capacity arithmetic: KubeVirt's launcher-pod formula and placing pods on nodes.
import { describe, expect, it } from "vitest";
import type { Node } from "../kube/cluster-facts.ts";
import type { VirtualMachineInstance } from "../kube/types.ts";
import { launcherPodRequest, memoryOverheadBytes, publishedOverheadBytes } from "./launcher-resources.ts";
import { countFits, nodeRooms, whyNotForVms } from "./node-room.ts";

const gib = 2 ** 30;
const mib = 2 ** 20;

function aNode(
  name: string,
  overrides: { cpu?: string; memory?: string; kvm?: boolean; ready?: boolean } = {},
): Node {
  return {
    metadata: { name, labels: { "kubevirt.io/schedulable": "true" } },
    status: {
      allocatable: {
        cpu: overrides.cpu ?? "8",
        memory: overrides.memory ?? "16Gi",
        pods: "110",
        ...(overrides.kvm === false ? {} : { "devices.kubevirt.io/kvm": "1k" }),
      },
      conditions: [{ type: "Ready", status: overrides.ready === false ? "False" : "True" }],
    },
  };
}

describe("the launcher pod of a VM", () => {
  it("requests what KubeVirt v1.9.0 asks for a 2 vCPU / 4Gi VM: 200m and 4592762881 bytes (4380Mi), plus the console-log sidecar", () => {
    const request = launcherPodRequest({ vcpus: 2, memoryBytes: 4 * gib }, { cpuAllocationRatio: 10 });
    // 4Gi + page tables 8,388,609 B (Go's rounding) + 220Mi fixed + 2 x 8Mi vCPU + 8Mi IOThread + 32Mi video RAM.
    expect(request).toEqual({ cpuMillis: 200 + 5, memoryBytes: 4_592_762_881 + 35_000_000 });
    expect(Math.round((request.memoryBytes - 35_000_000) / mib)).toBe(4380);
  });

  it("matches KubeVirt v1.9.0's unit test (1 vCPU / 1Gi: 270Mi) and counts no page tables for a guest-only VM", () => {
    expect(memoryOverheadBytes({ vcpus: 1, memoryBytes: gib })).toBe(270 * mib);
    // The 4372Mi measured on a real cluster: a VM that set only memory.guest.
    const guestOnly = launcherPodRequest(
      { vcpus: 2, memoryBytes: 4 * gib, guestOnly: true },
      { cpuAllocationRatio: 10 },
    );
    expect(guestOnly.memoryBytes - 35_000_000).toBe(4372 * mib);
  });

  it("follows the CPU allocation ratio and applies the additional overhead ratio to whole kilobytes", () => {
    expect(launcherPodRequest({ vcpus: 2, memoryBytes: 4 * gib }, { cpuAllocationRatio: 4 }).cpuMillis).toBe(
      500 + 5,
    );
    const plain = memoryOverheadBytes({ vcpus: 2, memoryBytes: 4 * gib });
    // MultiplyMemory: ceil(297,795,585 / 1000) kB x 0.5, truncated: 148,898 kB.
    expect(memoryOverheadBytes({ vcpus: 2, memoryBytes: 4 * gib }, "1.5")).toBe(plain + 148_898_000);
    expect(memoryOverheadBytes({ vcpus: 2, memoryBytes: 4 * gib }, "lots")).toBe(plain);
  });

  it("takes the overhead the VMI publishes over the formula", () => {
    const vmi = (memoryOverhead: unknown) =>
      ({ status: { memory: { memoryOverhead } } }) as unknown as VirtualMachineInstance;
    // passt adds 250Mi that the formula (masquerade) does not know about.
    const published = publishedOverheadBytes(vmi("526Mi"));
    expect(published).toBe(526 * mib);
    expect(
      launcherPodRequest({ vcpus: 2, memoryBytes: 4 * gib }, { cpuAllocationRatio: 10 }, published),
    ).toEqual({
      cpuMillis: 205,
      memoryBytes: 4 * gib + 526 * mib + 35_000_000,
    });
    expect(publishedOverheadBytes(vmi("297795585"))).toBe(297_795_585);
    expect(publishedOverheadBytes(vmi(undefined))).toBeUndefined();
    expect(publishedOverheadBytes(vmi("much"))).toBeUndefined();
    expect(publishedOverheadBytes(undefined)).toBeUndefined();
  });
});

describe("room on the nodes", () => {
  const request = { cpuMillis: 205, memoryBytes: 4.5 * gib };

  it("counts only Ready, schedulable nodes with KVM", () => {
    expect(whyNotForVms(aNode("a"))).toBeUndefined();
    expect(whyNotForVms(aNode("b", { kvm: false }))).toBe("no devices.kubevirt.io/kvm");
    expect(whyNotForVms(aNode("c", { ready: false }))).toBe("not Ready");
    expect(whyNotForVms({ ...aNode("d"), spec: { unschedulable: true } })).toBe("cordoned (unschedulable)");
    const rooms = nodeRooms([aNode("a"), aNode("b", { kvm: false })], []);
    expect(rooms.map((room) => room.name)).toEqual(["a"]);
    expect(countFits(rooms, request, 100)).toBe(3);
  });

  it("counts scheduled pods on their node and places waiting ones where the scheduler would", () => {
    const rooms = nodeRooms(
      [aNode("a"), aNode("b")],
      [
        { node: "a", request },
        { node: undefined, request },
        { node: undefined, request },
        // Fits nowhere once the others are placed: it takes no room.
        { node: undefined, request: { cpuMillis: 100, memoryBytes: 20 * gib } },
      ],
    );
    // Waiting pods go to the node with the most free memory: b, then a and b are even (a wins by name).
    expect(rooms.map((room) => room.used.memoryBytes / request.memoryBytes)).toEqual([2, 1]);
    expect(countFits(rooms, request, 100)).toBe(3);
    expect(countFits(rooms, { cpuMillis: 7600, memoryBytes: gib }, 100)).toBe(1);
    expect(countFits(rooms, request, 2)).toBe(2);
  });
});
