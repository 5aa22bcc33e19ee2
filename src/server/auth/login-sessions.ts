// Signed-in browsers, kept on the server so that signing out really ends the session (a signed
// cookie alone stays valid until it expires). In memory for now: a restart signs everyone out.
import { randomBytes } from "node:crypto";
import type { Me } from "../../common/api.ts";

export interface LoginSession {
  id: string;
  user: Me;
  expiresAt: number;
  /** Where signing out sends the browser to end the provider's session too (OpenID Connect). */
  providerSignOutUrl?: string;
}

export type LoginSessionListener = (ended: LoginSession) => void;

export const loginSessionLifetimeMs = 12 * 60 * 60 * 1000;

export class LoginSessions {
  private readonly sessions = new Map<string, LoginSession>();
  private readonly endedListeners = new Set<LoginSessionListener>();

  constructor(
    private readonly lifetimeMs = loginSessionLifetimeMs,
    private readonly now: () => number = Date.now,
  ) {}

  create(user: Me, details: Pick<LoginSession, "providerSignOutUrl"> = {}): LoginSession {
    this.dropExpired();
    const session: LoginSession = {
      id: randomBytes(32).toString("base64url"),
      user,
      expiresAt: this.now() + this.lifetimeMs,
      ...details,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  get(id: string): LoginSession | undefined {
    const session = this.sessions.get(id);
    if (session && session.expiresAt <= this.now()) {
      this.end(id);
      return undefined;
    }
    return session;
  }

  end(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    for (const listener of this.endedListeners) listener(session);
  }

  /** Called when a session ends (sign-out or expiry): whoever holds sockets for it closes them. */
  onEnded(listener: LoginSessionListener): () => void {
    this.endedListeners.add(listener);
    return () => this.endedListeners.delete(listener);
  }

  private dropExpired(): void {
    const now = this.now();
    for (const session of this.sessions.values()) {
      if (session.expiresAt <= now) this.end(session.id);
    }
  }
}
