// The secrets of a sign-in in progress (state, nonce, PKCE verifier) and where to go afterwards,
// kept in a short-lived signed cookie that only this browser holds and only the callback reads.
// A cookie rather than server memory: the provider may send the browser back to another replica.
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";

const cookieName = "lab_oidc";
const cookiePath = "/api/auth/oidc";
// Long enough to type a password and answer a second factor; short enough to be worthless later.
const lifetimeSeconds = 10 * 60;

const PendingSignIn = z.object({
  state: z.string().min(1),
  nonce: z.string().min(1),
  codeVerifier: z.string().min(43),
  returnTo: z.string().startsWith("/"),
});
export type PendingSignIn = z.infer<typeof PendingSignIn>;

export function keepPendingSignIn(
  request: FastifyRequest,
  reply: FastifyReply,
  pending: PendingSignIn,
): void {
  reply.setCookie(cookieName, JSON.stringify(pending), {
    ...cookieOptions(request),
    signed: true,
    maxAge: lifetimeSeconds,
  });
}

/** The pending sign-in this browser started, or undefined when there is none (expired, tampered, other browser). */
export function takePendingSignIn(request: FastifyRequest, reply: FastifyReply): PendingSignIn | undefined {
  const raw = request.cookies[cookieName];
  // Used once: a second visit to the same callback URL finds nothing.
  reply.clearCookie(cookieName, cookieOptions(request));
  if (!raw) return undefined;
  const unsigned = request.unsignCookie(raw);
  if (!unsigned.valid || !unsigned.value) return undefined;
  try {
    const parsed = PendingSignIn.safeParse(JSON.parse(unsigned.value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function cookieOptions(request: FastifyRequest) {
  return {
    httpOnly: true,
    // Lax, not Strict: the browser comes back from the provider's site in a top-level navigation,
    // which is exactly what Strict would leave the cookie out of.
    sameSite: "lax" as const,
    secure: request.protocol === "https",
    path: cookiePath,
  };
}
