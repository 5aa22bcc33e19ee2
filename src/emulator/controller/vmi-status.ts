// The parts of a VMI's status the lifecycle writes, shaped as virt-controller and virt-handler shape
// them. Pure, so the steps that write them (vmi-lifecycle.ts, launcher-pod-steps.ts) read as the
// order of events and this file as what each event leaves on the object.
import {
  field,
  isJsonObject,
  stringField,
  timestamp,
  type JsonObject,
  type KubeObject,
} from "../cluster/objects.ts";
import { vcpuCount } from "../cluster/memory-overhead.ts";
import { condition, type Condition } from "./kubevirt-state.ts";

export const agentConnected = "AgentConnected";

/** As virt-handler writes it: a probe time, no transition time, no reason. */
export function agentConnectedCondition(): Condition {
  return { type: agentConnected, status: "True", lastProbeTime: timestamp(), lastTransitionTime: null };
}

/** Replaces conditions of the given types, keeping lastTransitionTime when a status did not change. */
export function withConditions(object: KubeObject, updates: Condition[], remove: string[] = []): Condition[] {
  const current = (field(object, "status", "conditions") as Condition[] | undefined) ?? [];
  const kept = current.filter(
    (item) => !remove.includes(item.type) && !updates.some((update) => update.type === item.type),
  );
  const merged = updates.map((update) => {
    const before = current.find((item) => item.type === update.type);
    return before && before.status === update.status && before.reason === update.reason
      ? { ...update, lastTransitionTime: before.lastTransitionTime ?? update.lastTransitionTime ?? null }
      : update;
  });
  return [...merged, ...kept];
}

/** The phase, appended to phaseTransitionTimestamps the first time the VMI reaches it. */
export function phaseStatus(vmi: KubeObject, phase: string): JsonObject {
  const previous = field(vmi, "status", "phaseTransitionTimestamps");
  const list = Array.isArray(previous) ? [...previous] : [];
  if (!list.some((entry) => stringField(entry, "phase") === phase)) {
    list.push({ phase, phaseTransitionTimestamp: timestamp() });
  }
  return { phase, phaseTransitionTimestamps: list };
}

/** What virt-handler reports once the guest runs: Ready, its interface on the pod's IP, its domain. */
export function runningStatus(vmi: KubeObject, podIP: string, withAgent: boolean): JsonObject {
  const interfaces = field(vmi, "spec", "domain", "devices", "interfaces");
  const interfaceName = stringField(interfaces, 0, "name") ?? "default";
  const macHex = vmi.metadata.uid.replace(/-/g, "").slice(0, 10);
  const mac = `02:${macHex.match(/../g)?.join(":") ?? "00:00:00:00:00"}`;
  const cpu = field(vmi, "spec", "domain", "cpu");
  return {
    ...phaseStatus(vmi, "Running"),
    conditions: withConditions(vmi, [
      condition("Ready", "True"),
      ...(withAgent ? [agentConnectedCondition()] : []),
    ]),
    interfaces: [
      {
        name: interfaceName,
        ipAddress: podIP,
        ipAddresses: [podIP],
        mac,
        infoSource: "domain",
        podInterfaceName: "eth0",
        queueCount: 1,
        linkState: "up",
      },
    ],
    currentCPUTopology: isJsonObject(cpu)
      ? { cores: cpu.cores ?? 1, sockets: cpu.sockets ?? 1, threads: cpu.threads ?? 1 }
      : { cores: 1, sockets: vcpuCount(vmi), threads: 1 },
    machine: { type: "pc-q35-rhel9.6.0" },
    migrationMethod: "BlockMigration",
    migrationTransport: "Unix",
    runtimeUser: 107,
    selinuxContext: "none",
  };
}
