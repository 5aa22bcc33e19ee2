// Where the launch side of LTI keeps what every replica must share: the tool's signing keys, the
// platforms LMSs registered themselves, and one-time values (a login's state, a launch's ticket, a
// deep-linking request, each platform's nonces). Async so that SQLite and PostgreSQL fit alike;
// testing/launch-store-contract.ts holds what both must do.

/** One of this console's signing keys; the private half is sealed (tool-keys.ts) before it is stored. */
export interface StoredToolKey {
  kid: string;
  publicJwk: string;
  sealedPrivateJwk: string;
  createdAt: number;
}

/** A platform added through LTI Dynamic Registration: pending until an instructor approves it. */
export interface StoredPlatform {
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  authLoginUrl: string;
  tokenUrl: string;
  jwksUrl: string;
  deploymentIds: string[];
  status: "active" | "pending";
  registeredAt: number;
}

export type OneTimeKind = "login" | "ticket" | "deep-link" | "deep-link-answer";

export interface LtiLaunchStore {
  keys(): Promise<StoredToolKey[]>;
  addKey(key: StoredToolKey): Promise<void>;
  removeKey(kid: string): Promise<void>;

  platforms(): Promise<StoredPlatform[]>;
  /** Refuses (rejects) a second platform with the same issuer and client id. */
  addPlatform(platform: StoredPlatform): Promise<void>;
  /** The platform approved, or undefined when there is none by that id. */
  approvePlatform(id: string): Promise<StoredPlatform | undefined>;

  keep(kind: OneTimeKind, id: string, value: string, expiresAt: number): Promise<void>;
  /** The value, without using it up; undefined once taken or expired. */
  peek(kind: OneTimeKind, id: string, now: number): Promise<string | undefined>;
  /** The value, used up: a second take of the same id finds nothing, on any replica. */
  take(kind: OneTimeKind, id: string, now: number): Promise<string | undefined>;
  /** Records an id_token's nonce; false when the issuer used it before (a replay). */
  useNonce(issuer: string, nonce: string, expiresAt: number): Promise<boolean>;
  /** Forgets expired one-time values and nonces. */
  purge(now: number): Promise<void>;

  close(): Promise<void>;
}
