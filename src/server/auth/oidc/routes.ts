// The two halves of a sign-in at the OpenID Connect provider: send the browser there, and take it
// back. Both answer with redirects, never JSON: the browser navigates through them.
import type { FastifyInstance, FastifyReply } from "fastify";
import type { SignInError } from "../../../common/api.ts";
import type { AuditLog } from "../../audit/audit-log.ts";
import type { OidcAuthenticator } from "../authenticator.ts";
import { findSignIn, setSignInCookie } from "../current-user.ts";
import type { SignIns } from "../sign-ins.ts";
import type { SignOutCookie } from "../sign-out-cookie.ts";
import { oidcCallbackPath } from "./oidc-authenticator.ts";
import { keepPendingSignIn, takePendingSignIn } from "./pending-sign-in.ts";

export function registerOidcRoutes(
  app: FastifyInstance,
  {
    authenticator,
    signIns,
    audit,
    signOutCookie,
  }: {
    authenticator: OidcAuthenticator;
    signIns: SignIns;
    audit?: AuditLog;
    signOutCookie: SignOutCookie;
  },
): void {
  // Public: these are how one signs in.
  const open = { config: { access: "public" } } as const;
  app.get<{ Querystring: { returnTo?: string } }>("/api/auth/oidc/login", open, async (request, reply) => {
    let started: Awaited<ReturnType<OidcAuthenticator["beginSignIn"]>>;
    try {
      started = await authenticator.beginSignIn();
    } catch (error) {
      request.log.warn({ err: error }, "the OpenID provider cannot be reached");
      return backToSignIn(reply, "unavailable");
    }
    keepPendingSignIn(request, reply, {
      ...started.pending,
      returnTo: sameOriginPath(request.query.returnTo),
    });
    return reply.redirect(started.authorizationUrl.href);
  });

  app.get(oidcCallbackPath, open, async (request, reply) => {
    const pending = takePendingSignIn(request, reply);
    if (!pending) return backToSignIn(reply, "expired");
    // The provider's answer on the registered callback URL, whatever Host this request came in on.
    const callbackUrl = new URL(authenticator.redirectUrl);
    callbackUrl.search = new URL(request.url, callbackUrl).search;

    const outcome = await authenticator.completeSignIn(callbackUrl, pending);
    if (!outcome.ok) {
      request.log.warn({ reason: outcome.reason, detail: outcome.detail }, "OpenID sign-in refused");
      if (outcome.username !== null) {
        await audit?.record(
          {
            action: "sign-in-failed",
            actor: { username: outcome.username, role: null },
            details: { reason: outcome.reason },
          },
          request,
        );
      }
      return backToSignIn(reply, outcome.reason);
    }
    // A fresh id on every sign-in, so an id planted before sign-in is worthless afterwards.
    const previous = findSignIn(request, signIns);
    if (previous) await signIns.end(previous);
    const session = signIns.create(outcome.user, { providerSignOutUrl: outcome.signOutUrl?.href });
    setSignInCookie(request, reply, session);
    signOutCookie.set(request, reply, session);
    await audit?.record({ action: "sign-in", actor: outcome.user, details: { method: "oidc" } }, request);
    return reply.redirect(pending.returnTo);
  });
}

function backToSignIn(reply: FastifyReply, error: SignInError): FastifyReply {
  return reply.redirect(`/sign-in?${new URLSearchParams({ error })}`);
}

/** Only a path on this site: a crafted link must not send someone elsewhere after signing in. */
function sameOriginPath(value: string | undefined): string {
  if (!value?.startsWith("/")) return "/";
  // Resolved the way a browser would (it drops tabs and newlines, reads "\\" as "/"), then checked.
  const base = "http://lab-console.invalid";
  const resolved = new URL(value, base);
  const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
  // "/.//evil.example" resolves to the path "//evil.example", which a browser reads as another host.
  return resolved.origin === base && !path.startsWith("//") ? path : "/";
}
