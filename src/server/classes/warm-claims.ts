// A launch takes a warm VM of its lab: one patch makes it the student's session (owner, section,
// expiry, the claim time as its start), then the agent trades the warm key for the session's. The patch tests
// that the VM is still warm, so of two launches (or a launch and the pool's clean-up) on any replicas
// exactly one gets it; the other moves on to the next VM.
import { randomInt } from "node:crypto";
import type { Me, Session } from "../../common/api.ts";
import type { Lab } from "../../common/lab.ts";
import type { AgentClient } from "../grading/agent-client.ts";
import type { ClusterClient, JsonPatchOperation } from "../kube/client.ts";
import { launchSectionOf } from "../access/sections.ts";
import { KubeStatusError } from "../kube/errors.ts";
import {
  annotationKeys,
  labelKeys,
  metadataPath,
  ownerIdFor,
  sectionLabelValue,
} from "../sessions/labels.ts";
import type { SessionSnapshot, SessionSource, WarmVm } from "../sessions/source.ts";

/** A launch tries this many warm VMs before it starts a cold one. */
const maxClaimAttempts = 3;
/** A booted agent answers in milliseconds; one that does not is not worth a student's wait. */
const agentClaimTimeoutMs = 5_000;
const waitForReadsMs = 2_000;

export interface WarmClaimsDeps {
  cluster: Pick<ClusterClient, "patchVirtualMachine" | "deleteVirtualMachine">;
  source: SessionSource;
  agents: Pick<AgentClient, "claim">;
  now: () => Date;
  log: { warn(object: object, message: string): void };
}

/** Warm VMs of the lab a launch may claim: booted, agent answering. */
export function claimable(snapshot: SessionSnapshot, labId: string): WarmVm[] {
  return snapshot.warm.filter(
    (warm) =>
      warm.labId === labId &&
      !warm.vm.metadata.deletionTimestamp &&
      warm.vmi?.status?.phase === "Running" &&
      isReady(warm),
  );
}

/** Marked by the warm pool once the VM's agent answered. */
export function isReady(warm: WarmVm): boolean {
  return warm.vm.metadata.annotations?.[annotationKeys.warmReady] !== undefined;
}

export class WarmClaims {
  /** VMs a launch on this replica is taking: the others here pass them by instead of racing for them. */
  private readonly taking = new Set<string>();

  constructor(private readonly deps: WarmClaimsDeps) {}

  /** The student's new session on a warm VM, or undefined when none could be had (launch cold). */
  async claim(user: Me, lab: Lab, expiresAt: Date): Promise<Session | undefined> {
    const snapshot = await this.deps.source.snapshot();
    // In random order: launches on other replicas, reading the same VMs, rarely pick the same one.
    let attempts = 0;
    for (const warm of shuffled(claimable(snapshot, lab.id))) {
      if (attempts === maxClaimAttempts) break;
      if (this.taking.has(warm.name)) continue;
      attempts += 1;
      this.taking.add(warm.name);
      try {
        const session = await this.claimOne(warm, user, expiresAt);
        if (session) return session;
      } finally {
        this.taking.delete(warm.name);
      }
    }
    return undefined;
  }

  private async claimOne(warm: WarmVm, user: Me, expiresAt: Date): Promise<Session | undefined> {
    const claimedAt = this.deps.now().toISOString();
    if (!(await this.take(warm, user, expiresAt, claimedAt))) return undefined;
    try {
      await this.deps.agents.claim(warm.name, AbortSignal.timeout(agentClaimTimeoutMs));
    } catch (error) {
      // The VM is the student's now but its agent never took their key: not a session to hand out.
      this.deps.log.warn(
        { err: error, vm: warm.name },
        "a claimed warm VM's agent refused its key; VM deleted",
      );
      await this.deps.cluster.deleteVirtualMachine(warm.name).catch(() => undefined);
      return undefined;
    }
    await this.deps.source.waitForVm(
      warm.name,
      (vm) => vm?.metadata.annotations?.[annotationKeys.claimedAt] === claimedAt,
      waitForReadsMs,
    );
    const { sessions } = await this.deps.source.snapshot();
    return sessions.find((session) => session.id === warm.name);
  }

  /** True when this launch, and nobody else, turned the warm VM into the student's session. */
  private async take(warm: WarmVm, user: Me, expiresAt: Date, claimedAt: string): Promise<boolean> {
    const section = launchSectionOf(user);
    // A warm VM was booted for a class, not a section: it takes its student's now.
    const sectionLabel: JsonPatchOperation[] =
      section === null
        ? []
        : [{ op: "add", path: metadataPath("labels", labelKeys.section), value: sectionLabelValue(section) }];
    const operations: JsonPatchOperation[] = [
      { op: "test", path: metadataPath("labels", labelKeys.warmFor), value: warm.classId },
      { op: "remove", path: metadataPath("labels", labelKeys.warmFor) },
      { op: "add", path: metadataPath("labels", labelKeys.ownerId), value: ownerIdFor(user.username) },
      { op: "add", path: metadataPath("labels", labelKeys.fromClass), value: warm.classId },
      ...sectionLabel,
      // The whole map: nothing of the warm period's annotations carries over into the session.
      {
        op: "add",
        path: "/metadata/annotations",
        value: {
          [annotationKeys.owner]: user.username,
          [annotationKeys.expiresAt]: expiresAt.toISOString(),
          [annotationKeys.extensions]: "0",
          [annotationKeys.claimedAt]: claimedAt,
        },
      },
    ];
    try {
      await this.deps.cluster.patchVirtualMachine(warm.name, operations);
      return true;
    } catch (error) {
      // 422: the test failed, another launch was first; 404: the pool removed it meanwhile.
      if (error instanceof KubeStatusError && (error.statusCode === 422 || error.statusCode === 404))
        return false;
      throw error;
    }
  }
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = randomInt(index + 1);
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
}
