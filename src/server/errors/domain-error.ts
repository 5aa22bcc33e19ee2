// What a service says when it refuses: the kind of refusal, its reason (a code the SPA says in the
// reader's language) with the parameters of that sentence, and an English message for API clients
// and logs. Services know nothing of HTTP: http/errors.ts turns each kind into a status and a code.
import type { ErrorParams, ErrorReason } from "../../common/error-reasons.ts";

export type DomainErrorKind =
  /** The request itself is wrong, whatever the state. */
  | "invalid"
  | "not_found"
  | "forbidden"
  /** The current state does not allow it (not running, already going). */
  | "conflict"
  /** An allowance is spent: no further extension of this session. */
  | "used_up"
  /** A limit on what may run at once. */
  | "over_quota"
  /** The same again too soon: `retryAfterSeconds` says when it makes sense. */
  | "too_soon"
  /** The cluster has no room for it. */
  | "no_capacity"
  /** The cluster refused what a lab defines: its author must change the lab. */
  | "rejected"
  /** Not now: shutting down, moving, busy. */
  | "unavailable";

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    readonly reason: ErrorReason,
    message: string,
    readonly params: ErrorParams = {},
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "DomainError";
  }
}

/** The too-soon refusal of every throttle: the sentence names the wait. */
export function tooSoon(reason: ErrorReason, seconds: number, message: string): DomainError {
  return new DomainError("too_soon", reason, message, { seconds }, seconds);
}

/** The same 404 wherever a session is asked for: one the asker may not see does not exist for them. */
export function sessionNotFound(id: string): DomainError {
  return new DomainError("not_found", "session_not_found", `There is no session ${id}.`, { id });
}

export function labNotFound(labId: string): DomainError {
  return new DomainError("not_found", "lab_not_found", `There is no lab called ${labId}.`, { lab: labId });
}
