// Extending a session: the expiry lives on the VM (annotations), so it survives BFF restarts and every
// replica sees the same one. A student may extend their own session by the lab's extendMinutes, at
// most maxExtensions times; TAs and instructors may extend any session without that limit.
import type { Me, Session } from "../../common/api.ts";
import type { Lab } from "../../common/lab.ts";
import type { ErrorParams, ErrorReason } from "../../common/error-reasons.ts";
import { DomainError } from "../errors/domain-error.ts";
import type { ClusterClient } from "../kube/client.ts";
import { KubeStatusError } from "../kube/errors.ts";
import { annotationKeys, metadataPath } from "../sessions/labels.ts";
import type { SessionSource } from "../sessions/source.ts";

const waitForReadsMs = 2000;

export interface SessionExtensionsDeps {
  cluster: Pick<ClusterClient, "patchVirtualMachine">;
  source: SessionSource;
  /** The sessions API's rules for who sees which session (SessionService.get). */
  sessions: { get(user: Me, id: string): Promise<Session> };
  labs: Lab[];
  now: () => Date;
}

export interface Extended {
  session: Session;
  minutes: number;
}

export class SessionExtensions {
  private readonly labs: Map<string, Lab>;
  /** Sessions with an extension in flight: a double click must not extend twice. */
  private readonly extending = new Set<string>();

  constructor(private readonly deps: SessionExtensionsDeps) {
    this.labs = new Map(deps.labs.map((lab) => [lab.id, lab]));
  }

  async extend(user: Me, id: string): Promise<Extended> {
    const session = await this.deps.sessions.get(user, id);
    const lab = this.labs.get(session.labId);
    if (!lab)
      throw conflict(
        "lab_no_longer_offered",
        `The lab of this session (${session.labId}) is no longer offered; it cannot be extended.`,
        { lab: session.labId },
      );
    if (session.status !== "starting" && session.status !== "running") {
      throw conflict(
        "extend_not_active",
        `Only a starting or running session can be extended; this one is ${session.status}.`,
        { status: session.status },
      );
    }
    const expiresAt = Date.parse(session.expiresAt);
    const now = this.deps.now().getTime();
    if (!Number.isFinite(expiresAt)) throw conflict("no_end_time", "This session has no end time to extend.");
    if (expiresAt <= now) {
      throw conflict("time_already_up", "This session's time is already up; it is being ended.");
    }
    const { extendMinutes, maxExtensions } = lab.session;
    if (user.role === "student" && session.extensions >= maxExtensions) {
      throw maxExtensions === 0
        ? new DomainError(
            "used_up",
            "extension_not_allowed",
            `"${lab.title}" sessions cannot be extended. Ask a TA if you need more time.`,
            { lab: lab.title },
          )
        : new DomainError(
            "used_up",
            "extensions_used_up",
            `You have used ${maxExtensions === 1 ? "the one extension" : `all ${maxExtensions} extensions`} ` +
              "this lab allows. Ask a TA if you need more time.",
            { count: maxExtensions },
          );
    }
    if (this.extending.has(id))
      throw conflict("extending_already", "This session is being extended already.");
    this.extending.add(id);
    try {
      const newExpiry = new Date(expiresAt + extendMinutes * 60_000).toISOString();
      const newCount = String(session.extensions + 1);
      await this.patch(id, session, newExpiry, newCount);
      await this.deps.source.waitForVm(
        id,
        (vm) => vm?.metadata.annotations?.[annotationKeys.expiresAt] === newExpiry,
        waitForReadsMs,
      );
      const current = await this.deps.sessions.get(user, id);
      return {
        session: { ...current, expiresAt: newExpiry, extensions: Number(newCount) },
        minutes: extendMinutes,
      };
    } finally {
      this.extending.delete(id);
    }
  }

  private async patch(id: string, seen: Session, expiresAt: string, extensions: string): Promise<void> {
    try {
      await this.deps.cluster.patchVirtualMachine(id, [
        // Only if nobody changed the expiry since we read it (another replica, another click).
        { op: "test", path: metadataPath("annotations", annotationKeys.expiresAt), value: seen.expiresAt },
        { op: "replace", path: metadataPath("annotations", annotationKeys.expiresAt), value: expiresAt },
        { op: "add", path: metadataPath("annotations", annotationKeys.extensions), value: extensions },
      ]);
    } catch (error) {
      if (error instanceof KubeStatusError && error.statusCode === 422) {
        throw conflict(
          "changed_meanwhile",
          "This session changed at the same moment (extended or ended elsewhere). Try again.",
        );
      }
      throw error;
    }
  }
}

function conflict(reason: ErrorReason, message: string, params?: ErrorParams): DomainError {
  return new DomainError("conflict", reason, message, params);
}
