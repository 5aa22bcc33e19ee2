// Who someone is. Every sign-in method (demo users, OpenID Connect) sits behind this one interface,
// so the session store and the rest of the API never know which method is in use.
import type { Me, SignInError } from "../../common/api.ts";
import { hashPassword, verifyPassword } from "./passwords.ts";
import type { UserRecord } from "./users-file.ts";

export type Authenticator = PasswordAuthenticator | OidcAuthenticator;

export interface PasswordAuthenticator {
  readonly mode: "demo";
  /** The person, or null when the name or password is wrong (never says which). */
  login(username: string, password: string): Promise<Me | null>;
}

/** Sign-in at an OpenID Connect provider: the browser goes there and comes back with a code. */
export interface OidcAuthenticator {
  readonly mode: "oidc";
  /** Shown on the sign-in button: "Sign in with <providerName>". */
  readonly providerName: string;
  /** This console's callback as registered at the provider (a request's own Host is not trusted for it). */
  readonly redirectUrl: URL;
  /** Where to send the browser, and the secrets to keep until it comes back. */
  beginSignIn(): Promise<{ authorizationUrl: URL; pending: PendingOidcSignIn }>;
  /** Checks the provider's answer (state, PKCE, nonce, ID token) against the secrets kept. */
  completeSignIn(callbackUrl: URL, pending: PendingOidcSignIn): Promise<OidcSignInResult>;
}

/** What the browser must bring back from the provider; kept where only this browser has it. */
export interface PendingOidcSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export type OidcSignInResult =
  | {
      ok: true;
      user: Me;
      /** The provider's end-session URL for this sign-in, when it has one. */
      signOutUrl: URL | undefined;
    }
  | {
      ok: false;
      /** cancelled: the person said no at the provider; no-role: signed in but in no mapped group. */
      reason: OidcFailure;
      /** Who it was, when the provider said so (for the audit log). */
      username: string | null;
      /** For the log: what exactly went wrong. */
      detail: string;
    };

/** Why a sign-in failed; "expired" is the routes' own (no pending sign-in came back), lti-* the LTI launch's. */
export type OidcFailure = Exclude<SignInError, "expired" | `lti-${string}`>;

/** Looks people up; LiveUsers is one that follows the users file as it changes. */
export interface UserDirectory {
  find(username: string): UserRecord | undefined;
}

export async function createDemoAuthenticator(
  users: UserRecord[] | UserDirectory,
): Promise<PasswordAuthenticator> {
  const directory = Array.isArray(users) ? fixedDirectory(users) : users;
  // Unknown names are checked against a real hash too, so timing does not reveal which names exist.
  const decoy = await hashPassword("not-a-password");
  return {
    mode: "demo",
    async login(username, password) {
      const user = directory.find(username);
      const matches = await verifyPassword(password, user?.passwordHash ?? decoy);
      return user && matches ? { username: user.username, role: user.role, sections: user.sections } : null;
    },
  };
}

function fixedDirectory(users: UserRecord[]): UserDirectory {
  const byName = new Map(users.map((user) => [user.username, user]));
  return { find: (username) => byName.get(username) };
}
