import { describe, expect, it } from "vitest";
import { signForward, verifyForward } from "./forward-token.ts";

const secret = "a-server-secret-every-replica-shares-01234";
const claims = {
  sessionId: "linux-basics-abc12345",
  owner: "alice",
  identity: {
    username: "tara",
    role: "ta" as const,
    access: "staff" as const,
    signInId: "login-1",
    loginExpiresAt: 2_000_000_000_000,
  },
};

describe("forward tokens", () => {
  it("carry the viewer to another replica sharing the secret", () => {
    const token = signForward(secret, claims, 1_000);
    expect(verifyForward(secret, token, claims.sessionId, 2_000)).toEqual({
      ...claims,
      terminal: 0,
      expiresAt: 31_000,
    });
    const toTerminal = signForward(secret, { ...claims, terminal: 2 }, 1_000);
    expect(verifyForward(secret, toTerminal, claims.sessionId, 2_000)?.terminal).toBe(2);
  });

  it("are refused when forged, altered, expired, for another session or signed with another secret", () => {
    const token = signForward(secret, claims, 1_000);
    const [payload, mac] = token.split(".");
    const altered = Buffer.from(
      JSON.stringify({ ...claims, identity: { ...claims.identity, access: "owner" }, expiresAt: 31_000 }),
    ).toString("base64url");
    expect(verifyForward(secret, `${altered}.${mac}`, claims.sessionId, 2_000)).toBeUndefined();
    expect(verifyForward(secret, `${payload}.${mac}x`, claims.sessionId, 2_000)).toBeUndefined();
    expect(verifyForward(secret, token, claims.sessionId, 31_000)).toBeUndefined();
    expect(verifyForward(secret, token, "linux-basics-other000", 2_000)).toBeUndefined();
    expect(verifyForward(`${secret}-rotated`, token, claims.sessionId, 2_000)).toBeUndefined();
    expect(verifyForward(secret, undefined, claims.sessionId, 2_000)).toBeUndefined();
    expect(verifyForward(secret, "not-a-token", claims.sessionId, 2_000)).toBeUndefined();
  });
});
