// The capacity arithmetic: KubeVirt's launcher-pod formula and placing pods on nodes.
import { describe, expect, it } from "vitest";
import type { Node } from "../kube/cluster-facts.ts";
import { launcherPodRequest, memoryOverheadBytes } from "./launcher-resources.ts";
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
  it("requests what virt-controller asks for a 2 vCPU / 4Gi VM: 200m and 4400Mi, plus the console-log sidecar", () => {
    const request = launcherPodRequest({ vcpus: 2, memoryBytes: 4 * gib }, { cpuAllocationRatio: 10 });
    expect(request).toEqual({ cpuMillis: 200 + 5, memoryBytes: 4_613_733_792 + 35_000_000 });
    expect(Math.round((request.memoryBytes - 35_000_000) / mib)).toBe(4400);
  });

  it("follows the CPU allocation ratio and the additional overhead ratio", () => {
    expect(launcherPodRequest({ vcpus: 2, memoryBytes: 4 * gib }, { cpuAllocationRatio: 4 }).cpuMillis).toBe(
      500 + 5,
    );
    const plain = memoryOverheadBytes({ vcpus: 1, memoryBytes: gib });
    expect(
      Math.round(memoryOverheadBytes({ vcpus: 1, memoryBytes: gib }, "1.5") / plain / 0.001) * 0.001,
    ).toBe(1.5);
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
