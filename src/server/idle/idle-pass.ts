// The idle decision, one replica at a time (a coordination duty, like the reaper): for each running
// session of a lab with session.idle, how long since its last activity (console/idle-marks.ts: the
// VM's last-active mark, or its start), after asking its agent when it has been quiet a while. Past
// minutes − warnMinutes the VM is marked with the warning (the page and the console show it); at
// minutes the session ends (its VM deleted, as at expiry) or, where the lab says "pause", its VMI is
// paused through KubeVirt's pause subresource until the student resumes it (resume-route.ts).
// Everything it decides is on the VM, so a replica taking the duty over carries on from there.
import type { Session, SessionIdle } from "../../common/api.ts";
import type { Lab, LabIdle } from "../../common/lab.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import type { ClusterClient } from "../kube/client.ts";
import { KubeStatusError } from "../kube/errors.ts";
import { annotationKeys } from "../sessions/labels.ts";
import type { SessionObjects, SessionSource } from "../sessions/source.ts";
import type { AgentActivitySampler } from "./agent-activity.ts";
import { activityPatch, idleSince, markPatch, patchMarks } from "./idle-marks.ts";
import { RepeatingWork } from "../replicas/repeating-work.ts";

export const defaultIdlePassIntervalMs = 30_000;
/**
 * How long after its pause a VMI may still not show the Paused condition (virt-handler's sync after
 * virt-api's 200; sub-second as a rule) before it counts as unpaused by someone else.
 */
const pauseSettleMs = 2 * 60_000;
/** Agents asked at once in a pass: a slow VM must not hold up the others for long. */
const agentLooksAtOnce = 8;

export interface IdlePassDeps {
  cluster: Pick<ClusterClient, "patchVirtualMachine" | "deleteVirtualMachine" | "setVmiPaused">;
  source: SessionSource;
  labs: readonly Lab[];
  sampler: AgentActivitySampler;
  audit: Pick<AuditLog, "record">;
  now: () => Date;
  intervalMs?: number;
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
}

/** What one pass did, for tests and logs. */
export interface IdleOutcome {
  warned: string[];
  ended: string[];
  paused: string[];
  active: string[];
}

export class IdlePass {
  private readonly work: RepeatingWork;

  constructor(private readonly deps: IdlePassDeps) {
    this.work = new RepeatingWork({
      pass: () => this.passOnce(),
      intervalMs: deps.intervalMs ?? defaultIdlePassIntervalMs,
      log: deps.log,
      failed: "idle pass failed; retrying",
    });
  }

  // DutyWork: coordination starts it on the replica holding the idle lease.
  start(): void {
    this.work.start();
  }

  stop(): Promise<void> {
    return this.work.stop();
  }

  async passOnce(): Promise<IdleOutcome> {
    const outcome: IdleOutcome = { warned: [], ended: [], paused: [], active: [] };
    const { sessions, objects } = await this.deps.source.snapshot();
    const watched = sessions.filter((session) => session.status === "running" && this.idleOf(session));
    this.deps.sampler.keepOnly(new Set(watched.map((session) => session.id)));
    for (let index = 0; index < watched.length; index += agentLooksAtOnce) {
      await Promise.all(
        watched
          .slice(index, index + agentLooksAtOnce)
          .map((session) => this.judge(session, objects.get(session.id), outcome)),
      );
    }
    return outcome;
  }

  private idleOf(session: Session): LabIdle | undefined {
    return this.deps.labs.find((lab) => lab.id === session.labId)?.session.idle;
  }

  private async judge(session: Session, found: SessionObjects | undefined, outcome: IdleOutcome) {
    const idle = this.idleOf(session);
    if (!idle || !found) return;
    const { vm, vmi } = found;
    const now = this.deps.now();
    const vmiPaused = vmi?.status?.conditions?.some((c) => c.type === "Paused" && c.status === "True");
    const mark = session.idle;
    if (mark?.state === "paused") {
      // Unpaused outside Lab Console (virtctl, say): the student is back as far as anyone can tell.
      // But a pause shows on the VMI only at virt-handler's next sync after virt-api said yes: a VMI
      // not paused yet a moment after our pause is ours still on its way.
      const settled = now.getTime() - Date.parse(mark.endsAt) >= pauseSettleMs;
      if (!vmiPaused && settled) await patchMarks(this.deps.cluster, session.id, activityPatch(now, true));
      return;
    }
    // Paused by someone else: not idleness, and not ours to undo.
    if (vmiPaused) return;
    const since = idleSince(session, vm.metadata.annotations?.[annotationKeys.lastActive]);
    const quietMs = now.getTime() - since;
    // Typed into within the last pass: no need to ask the agent.
    if (quietMs >= (this.deps.intervalMs ?? defaultIdlePassIntervalMs) && vmi?.metadata.uid) {
      const verdict = await this.deps.sampler.look(session.id, vmi.metadata.uid, since, now.getTime());
      if (verdict === "active") {
        outcome.active.push(session.id);
        await patchMarks(this.deps.cluster, session.id, activityPatch(now, mark !== undefined));
        return;
      }
    }
    const limitMs = idle.minutes * 60_000;
    const endsAt = new Date(since + limitMs).toISOString();
    if (quietMs >= limitMs) {
      await (idle.action === "pause" ? this.pause(session, now, outcome) : this.end(session, idle, outcome));
    } else if (quietMs >= limitMs - idle.warnMinutes * 60_000) {
      if (mark?.endsAt === endsAt) return;
      const warning: SessionIdle = { state: "warning", action: idle.action, endsAt };
      if (await patchMarks(this.deps.cluster, session.id, markPatch(warning)))
        outcome.warned.push(session.id);
    } else if (mark) {
      // Activity moved the limit on (a key on another replica wrote last-active before the mark went).
      await patchMarks(this.deps.cluster, session.id, markPatch(undefined));
    }
  }

  private async end(session: Session, idle: LabIdle, outcome: IdleOutcome): Promise<void> {
    try {
      await this.deps.cluster.deleteVirtualMachine(session.id);
    } catch (error) {
      if (error instanceof KubeStatusError && error.statusCode === 404) return;
      throw error;
    }
    outcome.ended.push(session.id);
    this.deps.log.info({ session: session.id, owner: session.owner }, "session idle; VM deleted");
    await this.deps.audit.record({
      action: "end",
      actor: "system",
      session,
      details: { reason: "idle", idleMinutes: idle.minutes },
    });
  }

  private async pause(session: Session, now: Date, outcome: IdleOutcome): Promise<void> {
    // The mark first: a replica's page shows "paused" from the moment the VM stops answering.
    const mark: SessionIdle = { state: "paused", action: "pause", endsAt: now.toISOString() };
    if (!(await patchMarks(this.deps.cluster, session.id, markPatch(mark)))) return;
    try {
      await this.deps.cluster.setVmiPaused(session.id, true);
    } catch (error) {
      // 409 "already paused" is what we wanted; anything else leaves the session as it was.
      if (!(
        error instanceof KubeStatusError &&
        error.statusCode === 409 &&
        /already paused/.test(error.message)
      )) {
        await patchMarks(this.deps.cluster, session.id, markPatch(undefined)).catch(() => undefined);
        throw error;
      }
    }
    outcome.paused.push(session.id);
    this.deps.log.info({ session: session.id, owner: session.owner }, "session idle; VM paused");
    await this.deps.audit.record({ action: "idle-pause", actor: "system", session });
  }
}
