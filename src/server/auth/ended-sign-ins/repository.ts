// Where sign-outs are kept so that every replica, and this one after a restart, refuses a signed-out
// cookie. Only ended sign-ins are stored: a live one is carried whole by its cookie. Async throughout
// so that SQLite and PostgreSQL fit the same interface.

export interface EndedSignIn {
  /** The sign-in's random id (LoginSession.id). */
  id: string;
  /** When its cookie would have run out anyway (ms since the epoch): after that the row is useless. */
  expiresAt: number;
}

export interface EndedSignInsPage {
  endedSignIns: EndedSignIn[];
  /** Where the next endedSince call continues. */
  position: number;
}

export interface EndedSignInRepository {
  /** Records that a sign-in ended. Recording the same id again changes nothing. */
  record(ended: EndedSignIn): Promise<void>;
  /**
   * The sign-ins ended after `position` (0: every one kept), oldest first, and the position to ask
   * from next. A sign-in is never missed, even one whose write commits after a later one's; it may
   * come back in a later answer, so callers ignore ids they already know.
   */
  endedSince(position: number): Promise<EndedSignInsPage>;
  /** Forgets sign-ins that expired at or before `now`: their cookies are refused anyway. Returns how many. */
  purgeExpired(now: number): Promise<number>;
  close(): Promise<void>;
}
