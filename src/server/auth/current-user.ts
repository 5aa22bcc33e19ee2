// Which signed-in person a request belongs to. The signed `lab_session` cookie carries the whole
// sign-in (login-sessions.ts says why): its signature is checked, then its shape, then LoginSessions
// says whether it still stands. Routes ask `requireUser`; nothing else reads the cookie.
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { Me } from "../../common/api.ts";
import { unauthenticated } from "../http/errors.ts";
import type { LoginSession, LoginSessions } from "./login-sessions.ts";

export const sessionCookieName = "lab_session";

// The provider's sign-out URL carries the ID token as id_token_hint: 1-2 KB, more with many groups in
// it. Too big to send with every request, so it has a cookie of its own that only sign-out is sent.
const signOutCookieName = "lab_signout";
const signOutCookiePath = "/api/auth/logout";
// Browsers drop a cookie over 4096 bytes (name and value); this leaves room for the signature.
const maxSignOutCookieValue = 3600;

const CookieSignIn = z.object({
  id: z.string().regex(/^[\w-]{43}$/),
  user: Me,
  expiresAt: z.number().int().positive(),
});

const CookieSignOut = z.object({ id: z.string(), url: z.url() });

/** The `lab_session` cookie's value before signing: the sign-in as base64url JSON. */
export function encodeLoginSession(session: LoginSession): string {
  const { id, user, expiresAt } = session;
  return Buffer.from(JSON.stringify({ id, user, expiresAt })).toString("base64url");
}

export function findLoginSession(
  request: FastifyRequest,
  loginSessions: LoginSessions,
): LoginSession | undefined {
  const claimed = readSignedCookie(request, sessionCookieName, (value) =>
    CookieSignIn.safeParse(JSON.parse(Buffer.from(value, "base64url").toString("utf8"))),
  );
  const session = claimed && loginSessions.accept(claimed);
  if (!session) return undefined;
  const signOut = readSignedCookie(request, signOutCookieName, (value) =>
    CookieSignOut.safeParse(JSON.parse(value)),
  );
  return signOut?.id === session.id ? { ...session, providerSignOutUrl: signOut.url } : session;
}

export function requireUser(request: FastifyRequest, loginSessions: LoginSessions): Me {
  const session = findLoginSession(request, loginSessions);
  if (!session) throw unauthenticated();
  return session.user;
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, session: LoginSession): void {
  const expires = new Date(session.expiresAt);
  reply.setCookie(sessionCookieName, encodeLoginSession(session), {
    ...cookieOptions(request, "/"),
    signed: true,
    expires,
  });
  const signOut = signOutCookieValue(session);
  if (signOut) {
    reply.setCookie(signOutCookieName, signOut, {
      ...cookieOptions(request, signOutCookiePath),
      signed: true,
      expires,
    });
  }
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(sessionCookieName, cookieOptions(request, "/"));
  if (request.cookies[signOutCookieName] !== undefined) {
    reply.clearCookie(signOutCookieName, cookieOptions(request, signOutCookiePath));
  }
}

/**
 * The sign-out cookie's value (JSON: the URL is cookie-safe already, so it grows little), bound to
 * the sign-in by its id. Too long, the URL goes without id_token_hint: the provider then asks the
 * person to confirm, and client_id (always in it) still names the console.
 */
function signOutCookieValue(session: LoginSession): string | undefined {
  if (!session.providerSignOutUrl) return undefined;
  const url = new URL(session.providerSignOutUrl);
  const value = () => JSON.stringify({ id: session.id, url: url.href });
  if (encodeURIComponent(value()).length <= maxSignOutCookieValue) return value();
  url.searchParams.delete("id_token_hint");
  return encodeURIComponent(value()).length <= maxSignOutCookieValue ? value() : undefined;
}

/** A signed cookie's parsed value; undefined when absent, not signed by us, or not the right shape. */
function readSignedCookie<T>(
  request: FastifyRequest,
  name: string,
  parse: (value: string) => { success: true; data: T } | { success: false },
): T | undefined {
  const cookie = request.cookies[name];
  if (!cookie) return undefined;
  const unsigned = request.unsignCookie(cookie);
  if (!unsigned.valid || !unsigned.value) return undefined;
  try {
    const parsed = parse(unsigned.value);
    return parsed.success ? parsed.data : undefined;
  } catch {
    // Not JSON at all.
    return undefined;
  }
}

function cookieOptions(request: FastifyRequest, path: string) {
  return {
    httpOnly: true,
    sameSite: "strict" as const,
    // request.protocol only believes X-Forwarded-Proto when trustProxy is configured.
    secure: request.protocol === "https",
    path,
  };
}
