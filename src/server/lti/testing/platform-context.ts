// What every part of the test platform shares: its address (which is its issuer), its state and quirks,
// its signing key, and the tools' key sets as fetched from their JWKS URLs.
import {
  createRemoteJWKSet,
  exportJWK,
  generateKeyPair,
  type CryptoKey,
  type JWK,
  type JWTVerifyGetKey,
} from "jose";
import { newId, type PlatformQuirks, type PlatformState } from "./platform-state.ts";

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface PlatformKeys {
  /** The key the platform signs with; its public half is at /jwks. */
  current: SigningKey;
  /** A key of the same shape and kid that is in no JWKS: what a forger signs with. */
  forged: SigningKey;
}

export interface PlatformContext {
  readonly url: string;
  readonly state: PlatformState;
  readonly quirks: PlatformQuirks;
  readonly keys: PlatformKeys;
  readonly name: string;
  /** The tool's published keys (fetched, cached, fetched again for a kid not yet seen). */
  toolKeys(jwksUrl: string): JWTVerifyGetKey;
}

async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
  return { kid, privateKey, publicJwk };
}

export async function createPlatformKeys(): Promise<PlatformKeys> {
  const kid = newId("platform-key");
  const [current, forged] = await Promise.all([signingKey(kid), signingKey(kid)]);
  return { current, forged };
}

export function toolKeySets(): (jwksUrl: string) => JWTVerifyGetKey {
  const sets = new Map<string, JWTVerifyGetKey>();
  return (jwksUrl) => {
    let set = sets.get(jwksUrl);
    if (!set) {
      // No cooldown: a tool that rotates its key is fetched again at once, so a test need not wait.
      set = createRemoteJWKSet(new URL(jwksUrl), { cooldownDuration: 0, timeoutDuration: 5000 });
      sets.set(jwksUrl, set);
    }
    return set;
  };
}
