// A launch takes a warm VM of its lab: one patch makes it the student's session (owner, section,
// expiry, the claim time as its start), its user data is replaced by the session's, then the agent
// trades the warm key for the session's. The patch tests that the VM is still warm, so of two launches
// (or a launch and the pool's clean-up) on any replicas exactly one gets it; the other moves on to
// the next VM.
//
// The user data goes first: every VMI KubeVirt creates for the VM from then on (a restart, a guest's
// poweroff under runStrategy Always, an eviction, a crashed launcher) boots from a fresh disk with
// what the Secret holds, so it must hold the session's key before the running guest is given it. A
// guest that booted again in between still has the warm key, and refuses to be claimed with it.
import { randomInt } from "node:crypto";
import type { Me, Session } from "../../common/api.ts";
import type { Lab } from "../../common/lab.ts";
import type { AgentClient } from "../agent/client.ts";
import type { ClusterClient, JsonPatchOperation } from "../kube/client.ts";
import { launchSectionOf } from "../access/sections.ts";
import { isPatchNotApplied, KubeStatusError } from "../kube/errors.ts";
import { buildSessionObjects, ownedByVm } from "../sessions/vm-manifest.ts";
import {
  annotationKeys,
  labelKeys,
  metadataPath,
  ownerIdFor,
  sectionLabelValue,
} from "../sessions/labels.ts";
import type { SessionSnapshot, SessionSource, WarmVm } from "../sessions/source.ts";
import type { WarmPatchRefusals } from "./warm-patch-refusals.ts";

/** A launch tries this many warm VMs before it starts a cold one. */
const maxClaimAttempts = 3;
/** A booted agent answers in milliseconds; one that does not is not worth a student's wait. */
const agentClaimTimeoutMs = 5_000;
const waitForReadsMs = 2_000;

export interface WarmClaimsDeps {
  cluster: Pick<
    ClusterClient,
    "namespace" | "patchVirtualMachine" | "deleteVirtualMachine" | "createSecret" | "deleteSecret"
  >;
  source: SessionSource;
  agents: Pick<AgentClient, "claim">;
  /** The lab agent's part of a session's user data, with the session's key (agent/delivery.ts). */
  sessionUserData: (sessionId: string) => string;
  refusals: Pick<WarmPatchRefusals, "record">;
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
        const session = await this.claimOne(warm, lab, user, expiresAt);
        if (session) return session;
      } finally {
        this.taking.delete(warm.name);
      }
    }
    return undefined;
  }

  private async claimOne(warm: WarmVm, lab: Lab, user: Me, expiresAt: Date): Promise<Session | undefined> {
    const claimedAt = this.deps.now().toISOString();
    if (!(await this.take(warm, user, expiresAt, claimedAt))) return undefined;
    try {
      await this.replaceUserData(warm, lab, user, expiresAt);
    } catch (error) {
      return this.giveUp(warm, error, "a claimed warm VM's user data could not be replaced");
    }
    try {
      await this.deps.agents.claim(warm.name, AbortSignal.timeout(agentClaimTimeoutMs));
    } catch (error) {
      return this.giveUp(warm, error, "a claimed warm VM's agent refused its key");
    }
    await this.deps.source.waitForVm(
      warm.name,
      (vm) => vm?.metadata.annotations?.[annotationKeys.claimedAt] === claimedAt,
      waitForReadsMs,
    );
    const { sessions } = await this.deps.source.snapshot();
    return sessions.find((session) => session.id === warm.name);
  }

  /**
   * The VM is the student's now but cannot be a session they could keep: deleted, and the launch
   * moves on (the next warm VM, or a cold one).
   */
  private async giveUp(warm: WarmVm, error: unknown, what: string): Promise<undefined> {
    this.deps.log.warn({ err: error, vm: warm.name }, `${what}; VM deleted`);
    await this.deps.cluster.deleteVirtualMachine(warm.name).catch(() => undefined);
    return undefined;
  }

  /**
   * The session's user data under the warm VM's Secret name, which its VM refers to: deleted and
   * created again, since the BFF may create and delete Secrets but not change one (deploy/base).
   */
  private async replaceUserData(warm: WarmVm, lab: Lab, user: Me, expiresAt: Date): Promise<void> {
    const { userDataSecret } = buildSessionObjects({
      sessionId: warm.name,
      lab,
      owner: user.username,
      section: launchSectionOf(user),
      namespace: this.deps.cluster.namespace,
      expiresAt,
      agentUserData: this.deps.sessionUserData(warm.name),
    });
    const name = userDataSecret.metadata.name ?? "";
    await this.deps.cluster.deleteSecret(name);
    await this.deps.cluster.createSecret(ownedByVm(userDataSecret, warm.vm));
  }

  /** True when this launch, and nobody else, turned the warm VM into the student's session. */
  private async take(warm: WarmVm, user: Me, expiresAt: Date, claimedAt: string): Promise<boolean> {
    const operations = claimPatch({ classId: warm.classId, user, expiresAt, claimedAt });
    try {
      await this.deps.cluster.patchVirtualMachine(warm.name, operations);
      return true;
    } catch (error) {
      // A test failed (another launch was first, or the VM is being deleted), or it is gone already.
      if (isPatchNotApplied(error) || (error instanceof KubeStatusError && error.statusCode === 404))
        return false;
      // Refused for another reason: this launch starts cold, and someone must hear of it.
      this.deps.refusals.record(warm.name, "claim", error);
      return false;
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

/**
 * The claim: a JSON patch that applies only while the VM is still a warm VM of the class and not on
 * its way out, so of two launches that race for it exactly one gets it (the other's test fails: 422).
 */
export function claimPatch(claim: {
  classId: string;
  user: Me;
  expiresAt: Date;
  claimedAt: string;
}): JsonPatchOperation[] {
  const { classId, user, expiresAt, claimedAt } = claim;
  const section = launchSectionOf(user);
  // A warm VM was booted for a class, not a section: it takes its student's now.
  const sectionLabel: JsonPatchOperation[] =
    section === null
      ? []
      : [{ op: "add", path: metadataPath("labels", labelKeys.section), value: sectionLabelValue(section) }];
  return [
    // A VM on its way out keeps its labels, and may still be patched: it is nobody's session.
    { op: "test", path: "/metadata/deletionTimestamp", value: null },
    { op: "test", path: metadataPath("labels", labelKeys.warmFor), value: classId },
    { op: "remove", path: metadataPath("labels", labelKeys.warmFor) },
    { op: "add", path: metadataPath("labels", labelKeys.ownerId), value: ownerIdFor(user.username) },
    { op: "add", path: metadataPath("labels", labelKeys.fromClass), value: classId },
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
}
