// Sign-ins. A sign-in lives in its cookie: `lab_sign_in` carries the whole SignIn, signed with
// the session secret (current-user.ts), so any replica, and this one after a restart, accepts it
// without a lookup. What a cookie cannot say is that it was signed out. So signing out records the
// sign-in's id in a store every replica shares (ended-sign-ins/), and each replica keeps the ended
// ids that have not expired in memory: loaded before it serves, refreshed by polling the store every
// 2 s. Checking a request stays synchronous; a sign-out is refused at once on the replica where it
// happened and within one poll everywhere else.
// Two more things end sign-ins before their cookies expire: a cut-off ("every sign-in of this person
// issued up to now is over"), shared through the same store and polled the same way; and, with demo
// users, the users file (a person no longer in it, or with another role or sections there, is refused).
import { randomBytes } from "node:crypto";
import type { Me } from "../../common/api.ts";
import type { EndedSignIn, EndedSignInRepository, SignInCutOff } from "./ended-sign-ins/repository.ts";

export interface SignIn {
  /** 32 random bytes, base64url: names the sign-in when it is signed out. */
  id: string;
  user: Me;
  /** When it was signed in (ms since the epoch): what a cut-off compares. */
  issuedAt: number;
  expiresAt: number;
  /** Where signing out sends the browser to end the provider's session too (OpenID Connect). */
  providerSignOutUrl?: string;
  /** lti: made by an LMS's launch, which vouches for the person; the users file has no say over it. */
  via?: "lti";
}

export type SignInListener = (ended: SignIn) => void;

/**
 * Who may still be signed in, by an authority outside the cookie (the users file in demo mode).
 * `holds` is asked on every request, so it answers from memory.
 */
export interface UserStanding {
  /** Whether this person still exists with this role (and, in the users file, these sections). */
  holds(user: Me): boolean;
  /** Called after the authority changed, so sign-ins it no longer allows end at once. */
  onChange(listener: () => void): () => void;
}

export const signInLifetimeMs = 12 * 60 * 60 * 1000;
const signOutPollIntervalMs = 2000;
/** How long signing out waits for the store before answering anyway (the poll loop keeps trying). */
const storeWaitMs = 1000;
// Rows of expired sign-ins are useless but harmless: clearing them now and then is enough.
const purgeIntervalMs = 10 * 60 * 1000;

export interface SignInsOptions {
  /** Where sign-outs are shared with the other replicas and kept across restarts. */
  store: EndedSignInRepository;
  /** How often the other replicas' sign-outs are read, and sign-outs not yet stored retried. */
  pollIntervalMs?: number;
  lifetimeMs?: number;
  now?: () => number;
  log?: { info(message: string): void; warn(message: string): void };
  /** Checked on every request besides the cookie itself (demo mode: the users file). */
  standing?: UserStanding;
}

export class SignIns {
  private readonly store: EndedSignInRepository;
  private readonly pollIntervalMs: number;
  private readonly lifetimeMs: number;
  private readonly now: () => number;
  private readonly log: NonNullable<SignInsOptions["log"]> | undefined;
  /** Ended sign-ins that have not expired, with their expiry: what `accept` refuses. */
  private readonly ended = new Map<string, number>();
  /**
   * Sign-ins accepted here and not ended yet: whose end the listeners hear about. At most the
   * sign-ins of the last 12 hours that reached this replica.
   */
  private readonly accepted = new Map<string, SignIn>();
  /** Sign-outs made here that the store has not taken yet. */
  private readonly unstored = new Map<string, EndedSignIn>();
  private readonly endedListeners = new Set<SignInListener>();
  /** The cut-offs that have not expired, by username: what `accept` also refuses. */
  private readonly cutOffs = new Map<string, SignInCutOff>();
  private readonly standing: UserStanding | undefined;
  private readonly stopWatchingStanding: (() => void) | undefined;
  private position = 0;
  private lastPurge = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private storeFailing = false;
  private closed = false;

  private constructor(options: SignInsOptions) {
    this.store = options.store;
    this.pollIntervalMs = options.pollIntervalMs ?? signOutPollIntervalMs;
    this.lifetimeMs = options.lifetimeMs ?? signInLifetimeMs;
    this.now = options.now ?? Date.now;
    this.log = options.log;
    this.standing = options.standing;
    this.stopWatchingStanding = this.standing?.onChange(() => this.endWithoutStanding());
  }

  /**
   * Reads every sign-out the store keeps, then polls it. Rejects (DatabaseUnavailableError) when the
   * store cannot be read: serving without the sign-outs would let signed-out cookies back in.
   */
  static async open(options: SignInsOptions): Promise<SignIns> {
    const sessions = new SignIns(options);
    try {
      await sessions.readSignOuts();
    } catch (error) {
      sessions.stopWatchingStanding?.();
      throw error;
    }
    sessions.schedulePoll();
    return sessions;
  }

  create(user: Me, details: Pick<SignIn, "providerSignOutUrl" | "via"> = {}): SignIn {
    const issuedAt = this.now();
    return {
      id: randomBytes(32).toString("base64url"),
      user,
      issuedAt,
      expiresAt: issuedAt + this.lifetimeMs,
      ...details,
    };
  }

  /**
   * The sign-in a genuine cookie claims, unless it has expired, been signed out or cut off on any
   * replica, or (demo mode) its person is gone from the users file or has another role or other
   * sections there now.
   */
  accept(claimed: SignIn): SignIn | undefined {
    if (claimed.expiresAt <= this.now() || this.ended.has(claimed.id)) return undefined;
    if (this.isCutOff(claimed) || !this.stands(claimed)) return undefined;
    if (!this.accepted.has(claimed.id)) this.accepted.set(claimed.id, claimed);
    return claimed;
  }

  /**
   * Ends every sign-in of `username` issued until now, on every replica within a poll: refused here
   * at once, and the listeners told. Resolves once the store has it; rejects
   * (DatabaseUnavailableError) when it cannot be stored, and then nothing changed.
   */
  async cutOff(username: string): Promise<SignInCutOff> {
    const issuedUpTo = this.now();
    const cutOff: SignInCutOff = { username, issuedUpTo, expiresAt: issuedUpTo + this.lifetimeMs };
    await this.store.recordCutOff(cutOff);
    this.applyCutOff(cutOff);
    return cutOff;
  }

  /**
   * Ends the sign-in: refused here from now on, and the listeners told. Settles once the store has
   * it, or after at most a second while the store is slow or failing (the poll loop keeps trying).
   * Never rejects.
   */
  async end(session: SignIn): Promise<void> {
    if (this.ended.has(session.id)) return;
    const record: EndedSignIn = { id: session.id, expiresAt: session.expiresAt };
    this.ended.set(record.id, record.expiresAt);
    this.unstored.set(record.id, record);
    this.accepted.delete(record.id);
    this.notify(session);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, storeWaitMs)));
    await Promise.race([this.storeOne(record), waited]);
    clearTimeout(timer);
  }

  /**
   * Called when a sign-in accepted here ends: signed out here or on another replica (within a poll),
   * or expired (within a poll). Whoever holds sockets for it closes them.
   */
  onEnded(listener: SignInListener): () => void {
    this.endedListeners.add(listener);
    return () => this.endedListeners.delete(listener);
  }

  /** Stops polling, after one last try to store what the store has not taken yet. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopWatchingStanding?.();
    clearTimeout(this.timer);
    await this.polling;
    try {
      await this.storeUnstored();
    } catch (error) {
      this.log?.warn(
        `${this.unstored.size} sign-out(s) could not be stored before shutting down (${messageOf(error)}): ` +
          "their cookies are accepted again by other replicas, and after a restart, until they expire.",
      );
    }
  }

  private schedulePoll(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.polling = this.poll().finally(() => {
        this.polling = undefined;
        this.schedulePoll();
      });
    }, this.pollIntervalMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    this.forgetExpired();
    try {
      await this.storeUnstored();
      await this.readSignOuts();
      if (this.now() - this.lastPurge >= purgeIntervalMs) {
        await this.store.purgeExpired(this.now());
        this.lastPurge = this.now();
      }
      if (this.storeFailing) {
        this.storeFailing = false;
        this.log?.info("The sign-out store answers again: every sign-out is stored and shared.");
      }
    } catch (error) {
      if (!this.storeFailing) {
        this.log?.warn(
          `The sign-out store cannot be used (${messageOf(error)}): other replicas' sign-outs are not ` +
            `seen here until it answers; tried again every ${this.pollIntervalMs / 1000} s.`,
        );
      }
      this.storeFailing = true;
    }
  }

  private async storeOne(record: EndedSignIn): Promise<void> {
    try {
      await this.store.record(record);
      this.unstored.delete(record.id);
    } catch (error) {
      this.storeFailing = true;
      this.log?.warn(
        `A sign-out could not be stored (${messageOf(error)}). It holds on this replica already; it is ` +
          `tried again every ${this.pollIntervalMs / 1000} s, and the other replicas refuse it once it is stored.`,
      );
    }
  }

  private async storeUnstored(): Promise<void> {
    for (const record of [...this.unstored.values()]) {
      await this.store.record(record);
      this.unstored.delete(record.id);
    }
  }

  private async readSignOuts(): Promise<void> {
    for (const cutOff of await this.store.cutOffs(this.now())) this.applyCutOff(cutOff);
    const page = await this.store.endedSince(this.position);
    this.position = page.position;
    const now = this.now();
    for (const { id, expiresAt } of page.endedSignIns) {
      if (expiresAt <= now || this.ended.has(id)) continue;
      this.ended.set(id, expiresAt);
      const session = this.accepted.get(id);
      if (!session) continue;
      this.accepted.delete(id);
      this.notify(session);
    }
  }

  private isCutOff(session: SignIn): boolean {
    const cutOff = this.cutOffs.get(session.user.username);
    return cutOff !== undefined && session.issuedAt <= cutOff.issuedUpTo;
  }

  private applyCutOff(cutOff: SignInCutOff): void {
    const known = this.cutOffs.get(cutOff.username);
    if (known && known.issuedUpTo >= cutOff.issuedUpTo) return;
    this.cutOffs.set(cutOff.username, cutOff);
    this.endAcceptedWhere((session) => this.isCutOff(session));
  }

  private endWithoutStanding(): void {
    this.endAcceptedWhere((session) => !this.stands(session));
  }

  private stands(signIn: SignIn): boolean {
    return signIn.via === "lti" || this.standing?.holds(signIn.user) !== false;
  }

  private endAcceptedWhere(ends: (session: SignIn) => boolean): void {
    for (const session of [...this.accepted.values()]) {
      if (!ends(session)) continue;
      this.accepted.delete(session.id);
      this.notify(session);
    }
  }

  /** Expired sign-ins are refused by their expiry alone: no need to remember them any longer. */
  private forgetExpired(): void {
    const now = this.now();
    for (const [id, expiresAt] of this.ended) if (expiresAt <= now) this.ended.delete(id);
    for (const [username, cutOff] of this.cutOffs) {
      if (cutOff.expiresAt <= now) this.cutOffs.delete(username);
    }
    for (const session of this.accepted.values()) {
      if (session.expiresAt > now) continue;
      this.accepted.delete(session.id);
      this.notify(session);
    }
  }

  private notify(session: SignIn): void {
    for (const listener of this.endedListeners) listener(session);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
