// Which signed-in person a request belongs to. The signed `lab_sign_in` cookie carries the whole
// sign-in (sign-ins.ts says why): its signature is checked, then its shape, then SignIns
// says whether it still stands. The access policy asks (access/policy.ts); nothing else reads the
// cookie but sign-in and sign-out.
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { Me } from "../../common/api.ts";
import { cookieOptions } from "./cookie-options.ts";
import { signInLifetimeMs, type SignIn, type SignIns } from "./sign-ins.ts";
import { signOutCookieName, signOutCookiePath } from "./sign-out-cookie.ts";

export const signInCookieName = "lab_sign_in";
/**
 * The cookie's name before it was named for what it holds (a sign-in, not a lab session). Read, so
 * that an upgrade signs nobody out, and cleared with it; it is never set again, so it is gone once
 * the last one expires (a sign-in lasts 12 hours).
 */
export const formerSignInCookieName = "lab_session";

const CookieSignIn = z
  .object({
    id: z.string().regex(/^[\w-]{43}$/),
    user: Me,
    // Cookies from before cut-offs existed lack it: they were issued one lifetime before expiry.
    issuedAt: z.number().int().positive().optional(),
    expiresAt: z.number().int().positive(),
    via: z.literal("lti").optional(),
  })
  .transform(({ issuedAt, ...signIn }) => ({
    ...signIn,
    issuedAt: issuedAt ?? signIn.expiresAt - signInLifetimeMs,
  }));

/** The `lab_sign_in` cookie's value before signing: the sign-in as base64url JSON. */
export function encodeSignIn(signIn: SignIn): string {
  const { id, user, issuedAt, expiresAt, via } = signIn;
  return Buffer.from(JSON.stringify({ id, user, issuedAt, expiresAt, via })).toString("base64url");
}

export function findSignIn(request: FastifyRequest, signIns: SignIns): SignIn | undefined {
  const cookie = request.cookies[signInCookieName] ?? request.cookies[formerSignInCookieName];
  if (!cookie) return undefined;
  const unsigned = request.unsignCookie(cookie);
  if (!unsigned.valid || !unsigned.value) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(unsigned.value, "base64url").toString("utf8"));
  } catch {
    // Not JSON at all.
    return undefined;
  }
  const claimed = CookieSignIn.safeParse(json);
  if (!claimed.success || isTaFromBeforeSections(claimed.data.user, json)) return undefined;
  return signIns.accept(claimed.data);
}

/**
 * A TA's cookie from before sections existed names none, which would read as "a TA of the whole
 * course": that TA signs in again, and gets their sections from the provider or the users file.
 */
function isTaFromBeforeSections(user: Me, cookieJson: unknown): boolean {
  const raw = (cookieJson as { user?: { sections?: unknown } }).user;
  return user.role === "ta" && raw?.sections === undefined;
}

/** The sign-in cookie; the provider's sign-out URL, when there is one, goes in SignOutCookie. */
export function setSignInCookie(request: FastifyRequest, reply: FastifyReply, signIn: SignIn): void {
  reply.setCookie(signInCookieName, encodeSignIn(signIn), {
    ...cookieOptions(request, "/"),
    signed: true,
    expires: new Date(signIn.expiresAt),
  });
  clearFormerCookie(request, reply);
}

export function clearSignInCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(signInCookieName, cookieOptions(request, "/"));
  clearFormerCookie(request, reply);
  if (request.cookies[signOutCookieName] !== undefined) {
    reply.clearCookie(signOutCookieName, cookieOptions(request, signOutCookiePath));
  }
}

function clearFormerCookie(request: FastifyRequest, reply: FastifyReply): void {
  if (request.cookies[formerSignInCookieName] !== undefined) {
    reply.clearCookie(formerSignInCookieName, cookieOptions(request, "/"));
  }
}
