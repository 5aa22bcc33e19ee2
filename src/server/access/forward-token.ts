// What one replica tells another when it hands a browser's console over: who the viewer is and
// what they may do, already checked by the replica the browser reached. Signed with a key derived
// from the server secret every replica shares, short-lived, and bound to one session, so that
// nobody without the secret can open a console through the internal endpoint.
import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { Role } from "../../common/api.ts";
import { graphicalConsole, serialConsole } from "../../common/console-protocol.ts";

export const forwardHeader = "x-lab-console-forward";
const lifetimeMs = 30_000;

const ForwardClaims = z.object({
  sessionId: z.string(),
  owner: z.string(),
  /** Which of the session's consoles: 0 its serial console, -1 its screen, else a lab terminal. */
  terminal: z.number().int().min(graphicalConsole).default(serialConsole),
  identity: z.object({
    username: z.string(),
    role: Role,
    access: z.enum(["owner", "staff", "watcher"]),
    signInId: z.string(),
    loginExpiresAt: z.number(),
  }),
  expiresAt: z.number(),
});
export type ForwardClaims = z.infer<typeof ForwardClaims>;

function keyFor(secret: string): Buffer {
  // Its own key: a forward token can never pass for a signed cookie, nor the other way round.
  return createHmac("sha256", secret).update("lab-console console forward v1").digest();
}

function signature(secret: string, payload: string): Buffer {
  return createHmac("sha256", keyFor(secret)).update(payload).digest();
}

export function signForward(
  secret: string,
  claims: Omit<ForwardClaims, "expiresAt" | "terminal"> & { terminal?: number },
  now = Date.now(),
): string {
  const payload = Buffer.from(JSON.stringify({ ...claims, expiresAt: now + lifetimeMs })).toString(
    "base64url",
  );
  return `${payload}.${signature(secret, payload).toString("base64url")}`;
}

/** The claims, or undefined when the token is missing, forged, expired or for another session. */
export function verifyForward(
  secret: string,
  token: string | undefined,
  sessionId: string,
  now = Date.now(),
): ForwardClaims | undefined {
  const [payload, mac, ...rest] = (token ?? "").split(".");
  if (!payload || !mac || rest.length > 0) return undefined;
  const expected = signature(secret, payload);
  const given = Buffer.from(mac, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let parsed;
  try {
    parsed = ForwardClaims.safeParse(JSON.parse(Buffer.from(payload, "base64url").toString("utf8")));
  } catch {
    return undefined;
  }
  if (!parsed.success || parsed.data.expiresAt <= now || parsed.data.sessionId !== sessionId)
    return undefined;
  return parsed.data;
}
