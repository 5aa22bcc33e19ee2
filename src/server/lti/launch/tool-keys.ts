// This console's signing keys for LTI: client assertions for AGS and NRPS, deep-linking answers.
// Each LMS fetches the public halves from /api/lti/jwks and caches them, so keys rotate without a
// moment where a signature names a key an LMS has not seen: a new key is published a day before it
// signs anything, and an old one stays published for the rotation period after it last signed.
// Private halves are sealed with a key derived from the session secret before they reach the
// database, so a copy of the database alone cannot sign as this console.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from "jose";
import type { LtiLaunchStore, StoredToolKey } from "./store/repository.ts";
import type { ToolSigner } from "../model/model.ts";

const day = 24 * 60 * 60 * 1000;

export interface KeyRotation {
  /** A new key is made when the newest is this old. */
  periodMs: number;
  /** How long a new key is published before it signs. */
  leadMs: number;
}

export const defaultKeyRotation: KeyRotation = { periodMs: 30 * day, leadMs: day };
/** How often a replica reads the keys again, to follow a rotation another replica made. */
const reloadMs = 60_000;
const algorithm = "RS256";

export interface ToolKeyRing extends ToolSigner {
  /** The public keys an LMS may see signatures from: GET /api/lti/jwks. */
  jwks(): Promise<{ keys: JWK[] }>;
}

export function createToolKeyRing(deps: {
  store: LtiLaunchStore;
  secret: string;
  now: () => number;
  rotation?: KeyRotation;
  log?: { warn(message: string): void };
}): ToolKeyRing {
  const rotation = deps.rotation ?? defaultKeyRotation;
  const sealing = Buffer.from(
    hkdfSync("sha256", deps.secret, "lab-console", "lti tool keys", 32) as ArrayBuffer,
  );
  let loaded: { at: number; keys: StoredToolKey[] } | undefined;
  let loading: Promise<StoredToolKey[]> | undefined;

  async function current(): Promise<StoredToolKey[]> {
    if (loaded && deps.now() - loaded.at < reloadMs) return loaded.keys;
    loading ??= refresh().finally(() => (loading = undefined));
    return loading;
  }

  async function refresh(): Promise<StoredToolKey[]> {
    const now = deps.now();
    let keys = (await deps.store.keys()).filter((key) => opens(key));
    const newest = keys.at(-1);
    if (!newest || now - newest.createdAt >= rotation.periodMs) {
      const made = await makeKey(now);
      await deps.store.addKey(made);
      keys = [...keys, made];
    }
    // Kept while it may still be the signer or an LMS may hold its signatures: two periods.
    for (const key of keys.filter((key) => now - key.createdAt > 2 * rotation.periodMs + rotation.leadMs)) {
      await deps.store.removeKey(key.kid);
    }
    keys = keys.filter((key) => now - key.createdAt <= 2 * rotation.periodMs + rotation.leadMs);
    loaded = { at: now, keys };
    return keys;
  }

  function opens(key: StoredToolKey): boolean {
    try {
      unseal(key.sealedPrivateJwk);
      return true;
    } catch {
      // Sealed under another session secret: useless here, and never published as if it were ours.
      deps.log?.warn(`LTI key ${key.kid} was sealed with another session secret: a new key is made`);
      return false;
    }
  }

  async function makeKey(now: number): Promise<StoredToolKey> {
    const { publicKey, privateKey } = await generateKeyPair(algorithm, { extractable: true });
    const kid = randomBytes(12).toString("base64url");
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: algorithm, use: "sig" };
    return {
      kid,
      publicJwk: JSON.stringify(publicJwk),
      sealedPrivateJwk: seal(JSON.stringify(await exportJWK(privateKey))),
      createdAt: now,
    };
  }

  function seal(text: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", sealing, iv);
    const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
    return [iv, cipher.getAuthTag(), sealed].map((part) => part.toString("base64url")).join(".");
  }

  function unseal(text: string): JWK {
    const [iv, tag, sealed] = text.split(".").map((part) => Buffer.from(part, "base64url"));
    const decipher = createDecipheriv("aes-256-gcm", sealing, iv!);
    decipher.setAuthTag(tag!);
    return JSON.parse(Buffer.concat([decipher.update(sealed!), decipher.final()]).toString("utf8")) as JWK;
  }

  /** The newest key published for at least the lead time; the oldest while none has been that long. */
  function signer(keys: StoredToolKey[]): StoredToolKey {
    const ready = keys.filter((key) => deps.now() - key.createdAt >= rotation.leadMs);
    return ready.at(-1) ?? keys[0]!;
  }

  return {
    async jwks() {
      return { keys: (await current()).map((key) => JSON.parse(key.publicJwk) as JWK) };
    },
    async sign(payload: JWTPayload) {
      const key = signer(await current());
      const privateKey = await importJWK(unseal(key.sealedPrivateJwk), algorithm);
      return new SignJWT(payload)
        .setProtectedHeader({ alg: algorithm, kid: key.kid, typ: "JWT" })
        .sign(privateKey);
    },
  };
}
