// Sign-in, sign-out and "who am I"; and an instructor signing someone out everywhere. Signing in
// through an OpenID provider has routes of its own (oidc/routes.ts).
import type { FastifyInstance } from "fastify";
import {
  LoginRequest,
  type AuthConfig,
  type LogoutResult,
  type Me,
  type SignInState,
} from "../../common/api.ts";
import { signedInUser } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { addressKey } from "../http/client-address.ts";
import { HttpError, parseOrThrow } from "../http/errors.ts";
import { registerAdminSignOutRoute } from "./admin-sign-out-routes.ts";
import type { Authenticator } from "./authenticator.ts";
import { clearSignInCookie, findSignIn, setSignInCookie } from "./current-user.ts";
import type { SignIns } from "./sign-ins.ts";
import { isKnownDevice, rememberDevice } from "./known-device.ts";
import { SignInLimiter } from "./sign-in-limiter.ts";
import type { SignOutCookie } from "./sign-out-cookie.ts";

export function registerAuthRoutes(
  app: FastifyInstance,
  {
    authenticator,
    signIns,
    audit,
    signOutCookie,
    now,
  }: {
    authenticator: Authenticator;
    signIns: SignIns;
    audit?: AuditLog;
    /** Where the provider's sign-out URL is kept (OpenID Connect), read at sign-out. */
    signOutCookie: SignOutCookie;
    /** The sign-in limiter's clock, in milliseconds. */
    now?: () => number;
  },
): void {
  const signInLimiter = new SignInLimiter(now);

  // Public: the sign-in page asks before anyone is signed in.
  const open = { config: { access: "public" } } as const;
  app.get("/api/auth/config", open, async (): Promise<AuthConfig> =>
    authenticator.mode === "oidc"
      ? { mode: "oidc", providerName: authenticator.providerName }
      : { mode: "demo" },
  );
  // Public, and 200 for nobody too: the same sign-in the access rules accept (findSignIn), or null.
  app.get("/api/auth/session", open, async (request): Promise<SignInState> => ({
    user: findSignIn(request, signIns)?.user ?? null,
  }));
  registerAdminSignOutRoute(app, { signIns, audit });

  app.post("/api/auth/login", open, async (request, reply): Promise<Me> => {
    if (authenticator.mode !== "demo") {
      throw new HttpError(
        400,
        "invalid",
        "Password sign-in is off: sign in with your organisation's account.",
        "password_sign_in_off",
      );
    }
    const { username, password } = parseOrThrow(LoginRequest, request.body);
    const notAGuess = signInLimiter.reserve(
      addressKey(request.ip),
      username,
      isKnownDevice(request, username),
    );
    const user = await authenticator.login(username, password).catch((error: unknown) => {
      // Not judged (the users file could not be read...): the attempt does not count as a guess.
      notAGuess();
      throw error;
    });
    if (!user) {
      await audit?.record({ action: "sign-in-failed", actor: { username, role: null } }, request);
      throw new HttpError(401, "unauthenticated", "Wrong user name or password.", "wrong_password");
    }
    notAGuess();
    // A fresh id on every sign-in, so an id planted before sign-in is worthless afterwards.
    const previous = findSignIn(request, signIns);
    if (previous) await signIns.end(previous);
    setSignInCookie(request, reply, signIns.create(user));
    rememberDevice(request, reply, user.username);
    await audit?.record({ action: "sign-in", actor: user }, request);
    return user;
  });

  // Public: signing out a sign-in that no longer stands still clears its cookie.
  app.post("/api/auth/logout", open, async (request, reply) => {
    const session = findSignIn(request, signIns);
    if (session) await signIns.end(session);
    clearSignInCookie(request, reply);
    // The console's session is over either way; the provider's own one ends when the browser goes there.
    const providerSignOutUrl = session && signOutCookie.read(request, session);
    if (!providerSignOutUrl) return reply.status(204).send();
    const result: LogoutResult = { providerSignOutUrl };
    return reply.status(200).send(result);
  });

  app.get("/api/me", { config: { access: "signed-in" } }, async (request): Promise<Me> =>
    signedInUser(request),
  );
}
