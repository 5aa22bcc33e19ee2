// A browser that signed in as a person before. Sign-in counts its wrong passwords apart from
// everyone else's, so guessers (from many addresses, or from the same classroom NAT) cannot lock
// the person out of their own browser: what OWASP calls a device cookie. Signed with the session
// secret, it names one person and proves nothing else: it never signs anyone in by itself.
import type { FastifyReply, FastifyRequest } from "fastify";
import { cookieOptions } from "./cookie-options.ts";

const cookieName = "lab_known_device";
const maxAgeSeconds = 90 * 24 * 60 * 60;
/** Only the sign-in route reads it. */
const cookiePath = "/api/auth/login";

export function isKnownDevice(request: FastifyRequest, username: string): boolean {
  const raw = request.cookies[cookieName];
  if (raw === undefined) return false;
  const { valid, value } = request.unsignCookie(raw);
  return valid && value === username;
}

export function rememberDevice(request: FastifyRequest, reply: FastifyReply, username: string): void {
  reply.setCookie(cookieName, username, {
    ...cookieOptions(request, cookiePath),
    signed: true,
    maxAge: maxAgeSeconds,
  });
}
