// Session objects as a KubeVirt cluster returns them, built small with overrides for tests.
import type { Session } from "../../../common/api.ts";
import type { Lab } from "../../../common/lab.ts";
import type {
  Condition,
  VirtualMachine,
  VirtualMachineInstance,
  VirtualMachineInstancePhase,
  VirtualMachinePrintableStatus,
} from "../../kube/types.ts";
import { buildSessionObjects } from "../vm-manifest.ts";

export const createdAt = "2026-08-22T10:00:00Z";
export const expiresAt = "2026-08-22T11:00:00.000Z";

export function aLab(overrides: Partial<Lab> = {}): Lab {
  return {
    id: "linux-basics",
    title: "Linux basics",
    description: "",
    vm: { cpu: 2, memory: "4Gi", image: "quay.io/containerdisks/fedora:41", nested: false, cloudInit: null },
    session: { minutes: 60, extendMinutes: 15, maxExtensions: 2, terminals: 0, consoles: ["serial"] },
    checks: [],
    ...overrides,
  };
}

/** A running session as the sessions API answers it, an hour from its end. */
export function aRunningSession(id: string, overrides: Partial<Session> = {}): Session {
  return {
    id,
    labId: "lab",
    owner: "alice",
    section: null,
    status: "running",
    phase: "Running",
    createdAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    extensions: 0,
    timeline: [],
    message: null,
    notice: null,
    start: "cold",
    ...overrides,
  };
}

/** A session VM after the API server stored it and virt-controller wrote its status. */
export function aSessionVm(
  overrides: {
    printableStatus?: VirtualMachinePrintableStatus;
    deletionTimestamp?: string;
    extensions?: string;
    consecutiveFailCount?: number;
    runStrategy?: VirtualMachine["spec"]["runStrategy"];
  } = {},
): VirtualMachine {
  const { virtualMachine } = buildSessionObjects({
    sessionId: "linux-basics-x7k2m9qa",
    lab: aLab(),
    owner: "ana@example.edu",
    namespace: "lab-sessions",
    expiresAt: new Date(expiresAt),
  });
  const { metadata, spec } = virtualMachine;
  return {
    ...virtualMachine,
    metadata: {
      ...metadata,
      uid: "0f3c2b9e-5a71-4d3e-9a55-2f6c1d7e8b90",
      resourceVersion: "4711",
      creationTimestamp: createdAt,
      ...(overrides.deletionTimestamp ? { deletionTimestamp: overrides.deletionTimestamp } : {}),
      annotations: {
        ...metadata.annotations,
        ...(overrides.extensions === undefined ? {} : { "labconsole.dev/extensions": overrides.extensions }),
      },
    },
    spec: { ...spec, runStrategy: overrides.runStrategy ?? "Always" },
    status: {
      printableStatus: overrides.printableStatus ?? "Starting",
      ...(overrides.consecutiveFailCount
        ? {
            startFailure: {
              consecutiveFailCount: overrides.consecutiveFailCount,
              retryAfterTimestamp: "2026-08-22T10:05:00Z",
            },
          }
        : {}),
    },
  };
}

const typicalPath: VirtualMachineInstancePhase[] = ["Pending", "Scheduling", "Scheduled", "Running"];

/**
 * A VMI that went the typical way up to `phase` (Pending at 0 s, Scheduled at 10 s, Running at 20 s,
 * as measured) and then, for Succeeded, Failed or Unknown, one step further.
 */
export function aSessionVmi(
  phase: VirtualMachineInstancePhase,
  overrides: { conditions?: Condition[]; deletionTimestamp?: string; reason?: string } = {},
): VirtualMachineInstance {
  const seconds: Partial<Record<VirtualMachineInstancePhase, number>> = {
    Pending: 0,
    Scheduling: 0,
    Scheduled: 10,
    Running: 20,
  };
  const reached = typicalPath.includes(phase)
    ? typicalPath.slice(0, typicalPath.indexOf(phase) + 1)
    : phase === ""
      ? []
      : [...typicalPath, phase];
  const at = (phaseName: VirtualMachineInstancePhase) =>
    new Date(Date.parse(createdAt) + (seconds[phaseName] ?? 60) * 1000).toISOString().replace(".000Z", "Z");
  const pastScheduling = reached.includes("Scheduled");
  return {
    apiVersion: "kubevirt.io/v1",
    kind: "VirtualMachineInstance",
    metadata: {
      name: "linux-basics-x7k2m9qa",
      namespace: "lab-sessions",
      uid: "7b1d6e2a-0c44-4f1b-8e3a-9d2f5c6a1b07",
      resourceVersion: "4720",
      creationTimestamp: createdAt,
      ...(overrides.deletionTimestamp ? { deletionTimestamp: overrides.deletionTimestamp } : {}),
      labels: {
        "app.kubernetes.io/managed-by": "lab-console",
        "labconsole.dev/session": "linux-basics-x7k2m9qa",
        "labconsole.dev/lab": "linux-basics",
        ...(pastScheduling ? { "kubevirt.io/nodeName": "node-2" } : {}),
      },
      annotations: { "labconsole.dev/owner": "ana@example.edu" },
      ownerReferences: [
        {
          apiVersion: "kubevirt.io/v1",
          kind: "VirtualMachine",
          name: "linux-basics-x7k2m9qa",
          uid: "0f3c2b9e-5a71-4d3e-9a55-2f6c1d7e8b90",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    status: {
      phase,
      ...(overrides.reason ? { reason: overrides.reason } : {}),
      phaseTransitionTimestamps: reached.map((name) => ({ phase: name, phaseTransitionTimestamp: at(name) })),
      conditions: overrides.conditions ?? defaultConditions(phase),
      ...(pastScheduling ? { nodeName: "node-2" } : {}),
      ...(phase === "Running"
        ? { interfaces: [{ name: "default", ipAddress: "10.244.2.17", ipAddresses: ["10.244.2.17"] }] }
        : {}),
    },
  };
}

function defaultConditions(phase: VirtualMachineInstancePhase): Condition[] {
  if (phase === "Running") {
    return [
      { type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: "2026-08-22T10:00:20Z" },
      { type: "LiveMigratable", status: "True", lastProbeTime: null, lastTransitionTime: null },
    ];
  }
  return [
    {
      type: "Ready",
      status: "False",
      reason: "PodNotExists",
      message: "virt-launcher pod has not yet been scheduled",
      lastProbeTime: null,
      lastTransitionTime: createdAt,
    },
  ];
}

/** The condition the scheduler leaves when no node fits (copied from the launcher pod). */
export function unschedulable(message: string): Condition {
  return {
    type: "PodScheduled",
    status: "False",
    reason: "Unschedulable",
    message,
    lastProbeTime: null,
    lastTransitionTime: createdAt,
  };
}

/** The condition virt-controller sets when the launcher pod cannot pull the containerDisk. */
export function notSynchronized(reason: "ErrImagePull" | "ImagePullBackOff", message: string): Condition {
  return {
    type: "Synchronized",
    status: "False",
    reason,
    message,
    lastProbeTime: null,
    lastTransitionTime: createdAt,
  };
}
