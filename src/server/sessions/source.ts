// Where session reads come from. "cache": the shared VM and VMI caches, so a browser poll never
// reaches the cluster. "direct": a list from the API on every read, the naive design the dashboard
// bench measures the cache against.
import { randomUUID } from "node:crypto";
import type { Session } from "../../common/api.ts";
import type { ClusterClient } from "../kube/client.ts";
import { ClusterUnavailableError } from "../kube/errors.ts";
import type { ObjectCache } from "../kube/object-cache.ts";
import type { VirtualMachine, VirtualMachineInstance } from "../kube/types.ts";
import { labelKeys } from "./labels.ts";
import { toSession } from "./status.ts";

export interface SessionSnapshot {
  /** Newest first. */
  sessions: Session[];
  /** True when the view may be behind the cluster. */
  stale: boolean;
  /** The cluster objects behind each session, by session id: its size, its node, its phase. */
  objects: ReadonlyMap<string, SessionObjects>;
  /** VMs booted for a scheduled class and not claimed yet: nobody's sessions, but they take room. */
  warm: WarmVm[];
}

export interface WarmVm extends SessionObjects {
  name: string;
  labId: string;
  classId: string;
}

export interface SessionObjects {
  vm: VirtualMachine;
  vmi: VirtualMachineInstance | undefined;
}

export interface SessionSource {
  snapshot(): Promise<SessionSnapshot>;
  /** Changes whenever a snapshot would; undefined when reads have no version (direct mode). */
  version(): string | undefined;
  /** Resolves once reads show the VM named `id` in a state that satisfies `condition` (false on timeout). */
  waitForVm(
    id: string,
    condition: (vm: VirtualMachine | undefined) => boolean,
    timeoutMs: number,
  ): Promise<boolean>;
}

export function createCachedSessionSource(
  vms: ObjectCache<VirtualMachine>,
  vmis: ObjectCache<VirtualMachineInstance>,
): SessionSource {
  // Cache versions restart at zero with the process: the epoch keeps a version seen before a restart
  // from matching a different view after it.
  const epoch = randomUUID();
  const version = () => `${epoch}/${vms.version}/${vmis.version}`;
  // Rebuilt only when either cache changed, so a thousand polls between two changes share one build.
  let built: { version: string; snapshot: SessionSnapshot } | undefined;
  return {
    async snapshot() {
      if (!vms.synced || !vmis.synced) throw new ClusterUnavailableError(new Error("caches not synced yet"));
      if (built?.version !== version()) {
        const fresh = buildSessions(vms.list(), (name) => vmis.get(name));
        built = { version: version(), snapshot: { ...fresh, stale: vms.stale || vmis.stale } };
      }
      return built.snapshot;
    },
    version,
    waitForVm(id, condition, timeoutMs) {
      return vms.waitUntil(() => condition(vms.get(id)), timeoutMs);
    },
  };
}

export function createDirectSessionSource(cluster: ClusterClient): SessionSource {
  return {
    async snapshot() {
      const [vmList, vmiList] = await Promise.all([
        cluster.virtualMachines.list(),
        cluster.virtualMachineInstances.list(),
      ]);
      const vmiByName = new Map(vmiList.items.map((vmi) => [vmi.metadata.name, vmi]));
      return { ...buildSessions(vmList.items, (name) => vmiByName.get(name)), stale: false };
    },
    version: () => undefined,
    // Every read asks the API, so a write is visible to the next read at once.
    async waitForVm() {
      return true;
    },
  };
}

function buildSessions(
  vms: VirtualMachine[],
  vmiOf: (name: string) => VirtualMachineInstance | undefined,
): Omit<SessionSnapshot, "stale"> {
  const objects = new Map<string, SessionObjects>();
  const warm: WarmVm[] = [];
  const sessions = vms
    .flatMap((vm) => {
      const name = vm.metadata.name ?? "";
      const vmi = vmiOf(name);
      const classId = vm.metadata.labels?.[labelKeys.warmFor];
      if (classId !== undefined) {
        warm.push({ name, labId: vm.metadata.labels?.[labelKeys.lab] ?? "", classId, vm, vmi });
        return [];
      }
      const session = toSession(vm, vmi);
      objects.set(session.id, { vm, vmi });
      return [session];
    })
    .sort((a, b) =>
      a.createdAt === b.createdAt ? a.id.localeCompare(b.id) : a.createdAt < b.createdAt ? 1 : -1,
    );
  return { sessions, objects, warm };
}
