// What people can do with sessions, and who may see which. Reads come from a SessionSource;
// writes go to the cluster and wait briefly until reads show them, so a list right after a launch
// or an end already reflects it.
import {
  sessionStatuses,
  type Me,
  type Session,
  type SessionList,
  type SessionListQuery,
  type SessionStatus,
} from "../../common/api.ts";
import type { Lab } from "../../common/lab.ts";
import { launchSectionOf, maySeeSession, sessionScopeKey } from "../access/sections.ts";
import { DomainError, labNotFound, sessionNotFound } from "../errors/domain-error.ts";
import type { ClusterClient } from "../kube/client.ts";
import type { VirtualMachine } from "../kube/types.ts";
import type { LabNetworkPolicies } from "./lab-network-policy.ts";
import type { LaunchGate } from "./launch-gate.ts";
import type { SessionSource } from "./source.ts";
import { placeHoldingStatuses, toSession } from "./status.ts";
import { createSessionVm } from "./vm-creation.ts";
import { buildSessionObjects, newSessionId } from "./vm-manifest.ts";

const waitForReadsMs = 2000;

export interface SessionServiceDeps {
  cluster: ClusterClient;
  source: SessionSource;
  labs: Lab[];
  /** The lab agent's #cloud-config part for the new session's VM (vm-manifest.ts agentUserData). */
  agentUserData?: (sessionId: string) => string;
  /**
   * Asked before every launch: may refuse it (limits, capacity) or hold a place until it is done.
   * `roomHeld`: a warm VM already holds the room, so only the limits on sessions apply.
   */
  admission?: {
    admit(
      user: Me,
      lab: Lab,
      sessionId: string,
      options?: { roomHeld?: boolean },
    ): Promise<{ release(launched: boolean): void }>;
  };
  /** Scheduled classes' warm VMs: a launch takes one when its lab has one ready (classes/warm-claims.ts). */
  warm?: {
    hasReady(labId: string): Promise<boolean>;
    claim(user: Me, lab: Lab, expiresAt: Date): Promise<Session | undefined>;
  };
  /** Launches under way at once, bounded by the API write rate (launch-gate.ts). */
  gate?: LaunchGate;
  /** Opens the egress a lab declares before its VM exists (lab-network-policy.ts). */
  networkPolicies?: Pick<LabNetworkPolicies, "prepare">;
  now?: () => Date;
}

export class SessionService {
  private readonly labs: Map<string, Lab>;
  /** (owner, lab) pairs with a launch in flight: two quick clicks must not make two VMs. */
  private readonly launching = new Set<string>();
  private readonly now: () => Date;

  constructor(private readonly deps: SessionServiceDeps) {
    this.labs = new Map(deps.labs.map((lab) => [lab.id, lab]));
    this.now = deps.now ?? (() => new Date());
  }

  /** Names everything a list answer depends on, for ETags; undefined when reads are unversioned. */
  listVersion(user: Me, query: SessionListQuery): string | undefined {
    const version = this.deps.source.version();
    return version === undefined
      ? undefined
      : `${version}\n${sessionScopeKey(user)}\n${JSON.stringify(query)}`;
  }

  sessionVersion(user: Me, id: string): string | undefined {
    const version = this.deps.source.version();
    return version === undefined ? undefined : `${version}\n${sessionScopeKey(user)}\n${id}`;
  }

  async list(user: Me, query: SessionListQuery): Promise<SessionList> {
    const { sessions, stale } = await this.deps.source.snapshot();
    const matching = sessions.filter(
      (session) =>
        maySeeSession(user, session) &&
        (query.lab === undefined || session.labId === query.lab) &&
        (query.owner === undefined || session.owner === query.owner) &&
        (query.status === undefined || session.status === query.status),
    );
    const counts = Object.fromEntries(sessionStatuses.map((status) => [status, 0])) as Record<
      SessionStatus,
      number
    >;
    for (const session of matching) counts[session.status] += 1;
    const start = (query.page - 1) * query.pageSize;
    return {
      items: matching.slice(start, start + query.pageSize),
      total: matching.length,
      page: query.page,
      pageSize: query.pageSize,
      counts,
      stale,
    };
  }

  async get(user: Me, id: string): Promise<Session> {
    const session = await this.find(id);
    // A session this person may not see answers exactly like a missing one, so ids reveal nothing.
    if (!session || !maySeeSession(user, session)) throw sessionNotFound(id);
    return session;
  }

  async create(user: Me, labId: string): Promise<Session> {
    const lab = this.labs.get(labId);
    if (!lab) throw labNotFound(labId);
    const key = `${user.username}\n${labId}`;
    if (this.launching.has(key)) throw alreadyRunning(lab);
    this.launching.add(key);
    try {
      const { sessions } = await this.deps.source.snapshot();
      const existing = sessions.find(
        (session) =>
          session.owner === user.username &&
          session.labId === labId &&
          placeHoldingStatuses.has(session.status),
      );
      if (existing) throw alreadyRunning(lab, existing);
      const warm = await this.claimWarm(user, lab);
      if (warm) return warm;
      const leave = this.deps.gate?.enter(coldLaunchWrites);
      try {
        const sessionId = newSessionId(lab.id);
        const admission = await this.deps.admission?.admit(user, lab, sessionId);
        let launched = false;
        try {
          const session = await this.launch(user, lab, sessionId);
          launched = true;
          return session;
        } finally {
          admission?.release(launched);
        }
      } finally {
        leave?.();
      }
    } finally {
      this.launching.delete(key);
    }
  }

  async delete(user: Me, id: string): Promise<Session> {
    const session = await this.get(user, id);
    const answer = await this.deps.cluster.deleteVirtualMachine(id);
    await this.deps.source.waitForVm(
      id,
      (vm) => !vm || vm.metadata.deletionTimestamp !== undefined,
      waitForReadsMs,
    );
    const current = await this.find(id);
    if (current) return current;
    // Already gone from reads: describe it from the API's answer, marked as going away.
    const deleted = isVirtualMachine(answer) ? answer : undefined;
    if (!deleted) return { ...session, status: "stopping" };
    const deletionTimestamp = deleted.metadata.deletionTimestamp ?? this.now().toISOString();
    return toSession({ ...deleted, metadata: { ...deleted.metadata, deletionTimestamp } }, undefined);
  }

  /** A scheduled class's booted VM for this launch, or undefined: then it starts a VM of its own. */
  private async claimWarm(user: Me, lab: Lab): Promise<Session | undefined> {
    const { warm, admission, gate } = this.deps;
    if (!warm || !(await warm.hasReady(lab.id))) return undefined;
    const leave = gate?.enter(claimWrites);
    try {
      // The limits on sessions apply as to any launch; the room is the warm VM's already.
      const held = await admission?.admit(user, lab, `${lab.id}-warm`, { roomHeld: true });
      try {
        return await warm.claim(user, lab, this.expiryOf(lab));
      } finally {
        // The claim returns once reads show the session, which holds its place from then on.
        held?.release(false);
      }
    } finally {
      leave?.();
    }
  }

  private expiryOf(lab: Lab): Date {
    return new Date(this.now().getTime() + lab.session.minutes * 60_000);
  }

  private async launch(user: Me, lab: Lab, sessionId: string): Promise<Session> {
    const { cluster, source } = this.deps;
    // First, so the guest's first boot (cloud-init installing packages) already has its egress.
    await this.deps.networkPolicies?.prepare(lab);
    const expiresAt = this.expiryOf(lab);
    const { virtualMachine, userDataSecret } = buildSessionObjects({
      sessionId,
      lab,
      owner: user.username,
      section: launchSectionOf(user),
      namespace: cluster.namespace,
      expiresAt,
      agentUserData: this.deps.agentUserData?.(sessionId),
    });
    const created = await createSessionVm(cluster, { virtualMachine, userDataSecret });
    await source.waitForVm(sessionId, (vm) => vm !== undefined, waitForReadsMs);
    return (await this.find(sessionId)) ?? toSession(created, undefined);
  }

  private async find(id: string): Promise<Session | undefined> {
    const { sessions } = await this.deps.source.snapshot();
    return sessions.find((session) => session.id === id);
  }
}

function alreadyRunning(lab: Lab, existing?: Session): DomainError {
  const which = existing ? ` (${existing.id})` : "";
  return new DomainError(
    "conflict",
    "session_already_running",
    `You already have a session for "${lab.title}"${which}. End it before starting another.`,
    { lab: lab.title },
  );
}

/** A cold launch writes its VM and then its Secret; a claim patches the warm VM. */
const coldLaunchWrites = 2;
const claimWrites = 1;

function isVirtualMachine(value: unknown): value is VirtualMachine {
  return (value as { kind?: unknown } | null)?.kind === "VirtualMachine";
}
