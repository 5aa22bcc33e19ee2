// Which signed-in person a request belongs to: the signed `lab_session` cookie names a server-side
// login session. Routes ask `requireUser`; nothing else reads the cookie.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Me } from "../../common/api.ts";
import { unauthenticated } from "../http/errors.ts";
import type { LoginSession, LoginSessions } from "./login-sessions.ts";

export const sessionCookieName = "lab_session";

export function findLoginSession(
  request: FastifyRequest,
  loginSessions: LoginSessions,
): LoginSession | undefined {
  const cookie = request.cookies[sessionCookieName];
  if (!cookie) return undefined;
  const unsigned = request.unsignCookie(cookie);
  return unsigned.valid && unsigned.value ? loginSessions.get(unsigned.value) : undefined;
}

export function requireUser(request: FastifyRequest, loginSessions: LoginSessions): Me {
  const session = findLoginSession(request, loginSessions);
  if (!session) throw unauthenticated();
  return session.user;
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, session: LoginSession): void {
  reply.setCookie(sessionCookieName, session.id, {
    signed: true,
    httpOnly: true,
    sameSite: "strict",
    // request.protocol only believes X-Forwarded-Proto when trustProxy is configured.
    secure: request.protocol === "https",
    path: "/",
    expires: new Date(session.expiresAt),
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(sessionCookieName, {
    httpOnly: true,
    sameSite: "strict",
    secure: request.protocol === "https",
    path: "/",
  });
}
