// Which signed-in person a request belongs to. The signed `lab_session` cookie carries the whole
// sign-in (login-sessions.ts says why): its signature is checked, then its shape, then LoginSessions
// says whether it still stands. Routes ask `requireUser`; nothing else reads the cookie.
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { Me } from "../../common/api.ts";
import { unauthenticated } from "../http/errors.ts";
import { cookieOptions } from "./cookie-options.ts";
import { loginSessionLifetimeMs, type LoginSession, type LoginSessions } from "./login-sessions.ts";
import { signOutCookieName, signOutCookiePath } from "./sign-out-cookie.ts";

export const sessionCookieName = "lab_session";

const CookieSignIn = z
  .object({
    id: z.string().regex(/^[\w-]{43}$/),
    user: Me,
    // Cookies from before cut-offs existed lack it: they were issued one lifetime before expiry.
    issuedAt: z.number().int().positive().optional(),
    expiresAt: z.number().int().positive(),
  })
  .transform(({ issuedAt, ...signIn }) => ({
    ...signIn,
    issuedAt: issuedAt ?? signIn.expiresAt - loginSessionLifetimeMs,
  }));

/** The `lab_session` cookie's value before signing: the sign-in as base64url JSON. */
export function encodeLoginSession(session: LoginSession): string {
  const { id, user, issuedAt, expiresAt } = session;
  return Buffer.from(JSON.stringify({ id, user, issuedAt, expiresAt })).toString("base64url");
}

export function findLoginSession(
  request: FastifyRequest,
  loginSessions: LoginSessions,
): LoginSession | undefined {
  const cookie = request.cookies[sessionCookieName];
  if (!cookie) return undefined;
  const unsigned = request.unsignCookie(cookie);
  if (!unsigned.valid || !unsigned.value) return undefined;
  let claimed;
  try {
    claimed = CookieSignIn.safeParse(JSON.parse(Buffer.from(unsigned.value, "base64url").toString("utf8")));
  } catch {
    // Not JSON at all.
    return undefined;
  }
  return claimed.success ? loginSessions.accept(claimed.data) : undefined;
}

export function requireUser(request: FastifyRequest, loginSessions: LoginSessions): Me {
  const session = findLoginSession(request, loginSessions);
  if (!session) throw unauthenticated();
  return session.user;
}

/** The sign-in cookie; the provider's sign-out URL, when there is one, goes in SignOutCookie. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, session: LoginSession): void {
  reply.setCookie(sessionCookieName, encodeLoginSession(session), {
    ...cookieOptions(request, "/"),
    signed: true,
    expires: new Date(session.expiresAt),
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(sessionCookieName, cookieOptions(request, "/"));
  if (request.cookies[signOutCookieName] !== undefined) {
    reply.clearCookie(signOutCookieName, cookieOptions(request, signOutCookiePath));
  }
}
