// Keeps each scheduled class's warm VMs at the number pool-plan.ts asks for: boots them ahead of the
// start (within the room the capacity estimate sees), marks each ready once its agent answers, tops
// the reserve up as launches claim them, and deletes what is left unclaimed when the class ends or is
// cancelled. One replica does this at a time (a coordination duty); every decision is read from the
// cluster and the schedule on each pass, so a restart or a hand-over loses nothing.
import type { Lab } from "../../common/lab.ts";
import type { CapacityService } from "../capacity/capacity-service.ts";
import { countFits } from "../capacity/node-room.ts";
import type { AgentClient } from "../agent/client.ts";
import type { ClusterClient } from "../kube/client.ts";
import { isPatchNotApplied, KubeStatusError } from "../kube/errors.ts";
import type { LabNetworkPolicies } from "../sessions/lab-network-policy.ts";
import { annotationKeys, labelKeys, metadataPath } from "../sessions/labels.ts";
import type { SessionSnapshot, SessionSource, WarmVm } from "../sessions/source.ts";
import { placeHoldingStatuses, toSession } from "../sessions/status.ts";
import { createSessionVm } from "../sessions/vm-creation.ts";
import { buildSessionObjects, newSessionId } from "../sessions/vm-manifest.ts";
import { RepeatingWork } from "../replicas/repeating-work.ts";
import { poolTarget, type PoolTiming } from "./pool-plan.ts";
import { isReady } from "./warm-claims.ts";
import type { ClassRecord, ClassRepository } from "./repository.ts";
import type { WarmPatchRefusals } from "./warm-patch-refusals.ts";

export interface WarmPoolSettings extends PoolTiming {
  intervalMs: number;
  /** New VMs per pass, all classes together: with the interval, the pool's own bound on creations. */
  createsPerPass: number;
  /** A warm VM whose agent has not answered after this long is replaced. */
  bootTimeoutMs: number;
}

export const defaultWarmPoolSettings: WarmPoolSettings = {
  leadMs: 15 * 60_000,
  arrivalsMs: 15 * 60_000,
  intervalMs: 5_000,
  createsPerPass: 10,
  bootTimeoutMs: 10 * 60_000,
};

/** Readiness probes at once: each is a port-forward to one VM. */
const probesAtOnce = 8;
const probeTimeoutMs = 3_000;

export interface WarmPoolDeps {
  classes: ClassRepository;
  cluster: Pick<
    ClusterClient,
    "namespace" | "createVirtualMachine" | "createSecret" | "deleteVirtualMachine" | "patchVirtualMachine"
  >;
  source: SessionSource;
  labs: Lab[];
  refusals: Pick<WarmPatchRefusals, "record">;
  capacity: Pick<CapacityService, "clusterShape" | "rooms" | "podRequestFor">;
  agents: Pick<AgentClient, "warmHealth">;
  /** The agent's part of a warm VM's user data, with the warm key. */
  agentUserData: (vmName: string) => string;
  networkPolicies?: Pick<LabNetworkPolicies, "prepare">;
  now: () => Date;
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
  settings?: Partial<WarmPoolSettings>;
}

/** What one pass did, for the log and the tests. */
export interface PoolPass {
  created: string[];
  deleted: string[];
  ready: string[];
}

/** Sessions started from each class's pool that still hold a place. */
export function claimedByClass(snapshot: SessionSnapshot): Map<string, number> {
  const counts = new Map<string, number>();
  for (const session of snapshot.sessions) {
    const classId = snapshot.objects.get(session.id)?.vm.metadata.labels?.[labelKeys.fromClass];
    if (classId === undefined || !placeHoldingStatuses.has(session.status)) continue;
    counts.set(classId, (counts.get(classId) ?? 0) + 1);
  }
  return counts;
}

export class WarmPool {
  readonly settings: WarmPoolSettings;
  private readonly labs: Map<string, Lab>;
  private readonly work: RepeatingWork;
  /**
   * When this replica first saw each warm VM not ready, on its own monotonic clock: a boot is timed
   * here, not against the cluster's timestamps, which another machine's clock wrote.
   */
  private readonly seenBooting = new Map<string, number>();

  constructor(private readonly deps: WarmPoolDeps) {
    this.settings = { ...defaultWarmPoolSettings, ...deps.settings };
    this.labs = new Map(deps.labs.map((lab) => [lab.id, lab]));
    this.work = new RepeatingWork({
      pass: () => this.passOnce(),
      intervalMs: this.settings.intervalMs,
      log: deps.log,
      failed: "warm pool pass failed; retrying",
    });
  }

  start(): void {
    this.work.start();
  }

  stop(): Promise<void> {
    return this.work.stop();
  }

  async passOnce(): Promise<PoolPass> {
    const now = this.deps.now().getTime();
    const classes = await this.deps.classes.endingAfter(now);
    const snapshot = await this.deps.source.snapshot();
    const pass: PoolPass = { created: [], deleted: [], ready: [] };
    const byClass = new Map<string, WarmVm[]>();
    const scheduled = new Map(classes.map((record) => [record.id, record]));
    for (const warm of snapshot.warm) {
      if (warm.vm.metadata.deletionTimestamp) continue;
      const record = scheduled.get(warm.classId);
      const status = toSession(warm.vm, warm.vmi).status;
      const stuck = !isReady(warm) && this.bootingMs(warm.name) > this.settings.bootTimeoutMs;
      if (!record || !this.labs.has(warm.labId) || status === "failed" || stuck) {
        await this.remove(
          warm,
          pass,
          !record ? "class over or cancelled" : stuck ? "never became ready" : "failed",
        );
        continue;
      }
      byClass.set(warm.classId, [...(byClass.get(warm.classId) ?? []), warm]);
    }

    const booting = new Set(snapshot.warm.filter((warm) => !isReady(warm)).map((warm) => warm.name));
    for (const name of this.seenBooting.keys()) if (!booting.has(name)) this.seenBooting.delete(name);
    const claimed = claimedByClass(snapshot);
    let createsLeft = this.settings.createsPerPass;
    for (const record of classes) {
      const lab = this.labs.get(record.labId);
      if (!lab) continue;
      const warm = byClass.get(record.id) ?? [];
      const target = poolTarget(record, claimed.get(record.id) ?? 0, now, this.settings);
      if (warm.length > target) {
        // Not-yet-ready ones first: they have cost least so far.
        const surplus = [...warm]
          .sort((a, b) => Number(isReady(a)) - Number(isReady(b)))
          .slice(0, warm.length - target);
        for (const vm of surplus) await this.remove(vm, pass, "more than the class needs now");
      } else if (warm.length < target && createsLeft > 0) {
        const wanted = Math.min(target - warm.length, createsLeft);
        const count = Math.min(wanted, await this.roomFor(lab, snapshot, wanted));
        createsLeft -= count;
        pass.created.push(...(await this.create(lab, record, count)));
      }
    }

    pass.ready = await this.markReady(snapshot.warm.filter((warm) => scheduled.has(warm.classId)));
    if (pass.created.length + pass.deleted.length + pass.ready.length > 0) {
      this.deps.log.info(
        { created: pass.created.length, deleted: pass.deleted.length, ready: pass.ready.length },
        "warm pool pass",
      );
    }
    return pass;
  }

  private bootingMs(name: string): number {
    const now = performance.now();
    const since = this.seenBooting.get(name) ?? now;
    this.seenBooting.set(name, since);
    return now - since;
  }

  private async roomFor(lab: Lab, snapshot: SessionSnapshot, wanted: number): Promise<number> {
    const { capacity } = this.deps;
    try {
      const shape = await capacity.clusterShape();
      return countFits(capacity.rooms(shape, snapshot), capacity.podRequestFor(lab, shape, snapshot), wanted);
    } catch (error) {
      // Not knowing the nodes: boot nothing ahead. Launches still start VMs the normal way.
      this.deps.log.warn({ err: error }, "warm pool: capacity unknown; no VMs booted ahead this pass");
      return 0;
    }
  }

  private async create(lab: Lab, record: ClassRecord, count: number): Promise<string[]> {
    if (count === 0) return [];
    await this.deps.networkPolicies?.prepare(lab);
    const names = Array.from({ length: count }, () => newSessionId(lab.id));
    const results = await Promise.allSettled(
      names.map((name) =>
        createSessionVm(
          this.deps.cluster,
          buildSessionObjects({
            sessionId: name,
            lab,
            owner: { warmFor: record.id },
            namespace: this.deps.cluster.namespace,
            expiresAt: undefined,
            agentUserData: this.deps.agentUserData(name),
          }),
        ),
      ),
    );
    const failed = results.find((result) => result.status === "rejected");
    if (failed)
      this.deps.log.warn({ err: failed.reason, class: record.id }, "warm pool: creating a VM failed");
    return names.filter((_, index) => results[index]?.status === "fulfilled");
  }

  /**
   * Only the version read: a launch that claimed the VM since changed it, and the API then answers
   * 409 instead of deleting a student's session.
   */
  private async remove(warm: WarmVm, pass: PoolPass, why: string): Promise<void> {
    const resourceVersion = warm.vm.metadata.resourceVersion;
    try {
      await this.deps.cluster.deleteVirtualMachine(
        warm.name,
        resourceVersion ? { resourceVersion } : undefined,
      );
    } catch (error) {
      if (error instanceof KubeStatusError && (error.statusCode === 404 || error.statusCode === 409)) return;
      throw error;
    }
    pass.deleted.push(warm.name);
    this.deps.log.info({ vm: warm.name, class: warm.classId, why }, "warm VM deleted");
  }

  /** Asks each running warm VM that is not marked ready yet whether its agent answers. */
  private async markReady(warm: WarmVm[]): Promise<string[]> {
    const waiting = warm.filter(
      (vm) => !vm.vm.metadata.deletionTimestamp && vm.vmi?.status?.phase === "Running" && !isReady(vm),
    );
    const ready: string[] = [];
    for (let start = 0; start < waiting.length; start += probesAtOnce) {
      await Promise.all(
        waiting.slice(start, start + probesAtOnce).map(async (vm) => {
          try {
            await this.deps.agents.warmHealth(vm.name, AbortSignal.timeout(probeTimeoutMs));
          } catch {
            return; // Still booting: asked again next pass.
          }
          if (await this.markOne(vm)) ready.push(vm.name);
        }),
      );
    }
    return ready;
  }

  private async markOne(vm: WarmVm): Promise<boolean> {
    try {
      await this.deps.cluster.patchVirtualMachine(vm.name, [
        { op: "test", path: metadataPath("labels", labelKeys.warmFor), value: vm.classId },
        {
          op: "add",
          path: "/metadata/annotations",
          value: { ...vm.vm.metadata.annotations, [annotationKeys.warmReady]: this.deps.now().toISOString() },
        },
      ]);
      return true;
    } catch (error) {
      // Claimed or deleted meanwhile: nothing to mark.
      if (isPatchNotApplied(error) || (error instanceof KubeStatusError && error.statusCode === 404))
        return false;
      this.deps.refusals.record(vm.name, "ready", error);
      return false;
    }
  }
}
