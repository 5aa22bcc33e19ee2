// The provider's sign-out URL for one sign-in, in a cookie of its own: it carries the ID token as
// id_token_hint (1-2 KB, more with many groups in it), too big to send with every request, so only the
// sign-out path is sent it. The ID token holds the person's claims (name, e-mail, groups), so the
// value is encrypted (AES-256-GCM), not merely signed: the browser's cookie store shows nothing of it.
// The sign-in's id is the authenticated data, so the cookie counts only beside its own sign-in.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { cookieOptions } from "./cookie-options.ts";
import type { SignIn } from "./sign-ins.ts";

export const signOutCookieName = "lab_signout";
export const signOutCookiePath = "/api/auth/logout";
// Browsers drop a cookie over 4096 bytes (name, value and attributes); this leaves room for the rest.
const maxCookieValue = 3600;
const ivBytes = 12;
const tagBytes = 16;

export class SignOutCookie {
  private readonly key: Buffer;

  constructor(sessionSecret: string) {
    // A key of its own: it signs nothing and no other key encrypts with it.
    this.key = Buffer.from(hkdfSync("sha256", sessionSecret, "", "lab-console sign-out cookie v1", 32));
  }

  /**
   * Sets the cookie when the sign-in has a provider sign-out URL. Too long, the URL goes without
   * id_token_hint: the provider then asks the person to confirm, and client_id (always in it) still
   * names the console.
   */
  set(request: FastifyRequest, reply: FastifyReply, session: SignIn): void {
    if (!session.providerSignOutUrl) return;
    const url = new URL(session.providerSignOutUrl);
    let value = this.seal(url.href, session.id);
    if (value.length > maxCookieValue) {
      url.searchParams.delete("id_token_hint");
      value = this.seal(url.href, session.id);
    }
    if (value.length > maxCookieValue) return;
    reply.setCookie(signOutCookieName, value, {
      ...cookieOptions(request, signOutCookiePath),
      expires: new Date(session.expiresAt),
    });
  }

  /** The URL kept for this sign-in; undefined when absent, altered, or another sign-in's. */
  read(request: FastifyRequest, session: SignIn): string | undefined {
    const value = request.cookies[signOutCookieName];
    if (!value) return undefined;
    const sealed = Buffer.from(value, "base64url");
    if (sealed.length <= ivBytes + tagBytes) return undefined;
    const decipher = createDecipheriv("aes-256-gcm", this.key, sealed.subarray(0, ivBytes));
    decipher.setAAD(Buffer.from(session.id));
    decipher.setAuthTag(sealed.subarray(ivBytes, ivBytes + tagBytes));
    try {
      const url = Buffer.concat([
        decipher.update(sealed.subarray(ivBytes + tagBytes)),
        decipher.final(),
      ]).toString("utf8");
      return URL.canParse(url) ? url : undefined;
    } catch {
      // Altered, sealed with another secret, or bound to another sign-in.
      return undefined;
    }
  }

  /** iv, tag and ciphertext, base64url (cookie-safe as it is). */
  private seal(url: string, signInId: string): string {
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(signInId));
    const encrypted = Buffer.concat([cipher.update(url, "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), encrypted]).toString("base64url");
  }
}
