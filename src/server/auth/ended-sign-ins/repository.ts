// Where sign-outs are kept so that every replica, and this one after a restart, refuses a signed-out
// cookie. Only ended sign-ins are stored: a live one is carried whole by its cookie. Two kinds of
// record: one sign-in ended (its id), and every sign-in of one person issued up to a moment ended
// (a cut-off: the person was removed or demoted, or their cookie may have been stolen). Async
// throughout so that SQLite and PostgreSQL fit the same interface.

export interface EndedSignIn {
  /** The sign-in's random id (SignIn.id). */
  id: string;
  /** When its cookie would have run out anyway (ms since the epoch): after that the row is useless. */
  expiresAt: number;
}

export interface EndedSignInsPage {
  endedSignIns: EndedSignIn[];
  /** Where the next endedSince call continues. */
  position: number;
}

export interface SignInCutOff {
  username: string;
  /** Sign-ins of this person issued at or before this moment (ms since the epoch) no longer count. */
  issuedUpTo: number;
  /** When the last cookie it refuses runs out (issuedUpTo + the sign-in lifetime): after that it is useless. */
  expiresAt: number;
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
  /**
   * Records a cut-off. One is kept per person: of two, the later `issuedUpTo` and the later
   * `expiresAt`, so a cut-off never moves back.
   */
  recordCutOff(cutOff: SignInCutOff): Promise<void>;
  /**
   * Every cut-off that has not expired at `now`. Read whole on every poll: there are few (one per
   * person cut off in the last 12 hours), and a write that commits late is simply seen next time.
   */
  cutOffs(now: number): Promise<SignInCutOff[]>;
  /**
   * Forgets sign-outs and cut-offs that expired at or before `now`: their cookies are refused anyway.
   * Returns how many rows went.
   */
  purgeExpired(now: number): Promise<number>;
  close(): Promise<void>;
}
