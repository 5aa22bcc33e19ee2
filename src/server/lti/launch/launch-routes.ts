// An LMS's launch, from its first request to a signed-in browser on the lab (LTI 1.3 Core §5.1):
//   1. POST|GET /api/lti/login      the LMS starts a login; we keep a state and a nonce, send the browser to the LMS
//   2. POST /api/lti/launch         the LMS posts its id_token back; LaunchChecker checks it
//   3. GET /api/lti/continue        a one-time ticket signs the browser in, at top level
// Step 3 is apart because an LMS may show the launch in a frame, where a browser keeps (or refuses)
// cookies as a third party's. A launch answered at top level goes straight on; one in a frame shows a
// link that opens Lab Console in a new window, where its cookie is first-party. Nothing of the
// sign-in depends on a cookie reaching a frame.
// Login CSRF (someone's own launch, posted from another browser, signing that browser in as them):
// over https the login leaves a cookie naming its state, which the launch must find when it comes
// to the top-level window. A framed launch may not get it (third-party cookies); one without it
// signs in only after the person, shown the name, confirms in the new window.
// A deep-linking launch signs nobody in: it goes to the picker wherever it was answered, and the
// picker is authorised by its request's id (deep-linking.ts), since the LMS reads the answer from the
// frame it opened and a new window would lose it.
import { createHash, randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Me, SignInError } from "../../../common/api.ts";
import type { Lab } from "../../../common/lab.ts";
import type { AuditLog } from "../../audit/audit-log.ts";
import { findSignIn, setSignInCookie } from "../../auth/current-user.ts";
import type { SignIns } from "../../auth/sign-ins.ts";
import type { SignOutCookie } from "../../auth/sign-out-cookie.ts";
import { addressKey } from "../../http/client-address.ts";
import { RateLimiter } from "../../http/rate-limit.ts";
import { LaunchRefused, type LaunchChecker, type PendingLogin } from "./check-launch.ts";
import { keepDeepLinkRequest } from "./deep-linking.ts";
import { ltiLaunchPath, ltiLoginPath } from "./lti-paths.ts";
import type { LtiLaunchStore } from "./store/repository.ts";
import type { LaunchRecorder, LtiLaunch, Platform, PlatformDirectory } from "../model/model.ts";
import { sendConfirmPage, sendFramedPage } from "./pages.ts";

const loginLifetimeMs = 10 * 60_000;
const ticketLifetimeMs = 10 * 60_000;

export interface LaunchRoutesDeps {
  platforms: PlatformDirectory & { reload(): Promise<void> };
  store: LtiLaunchStore;
  checker: LaunchChecker;
  grades: LaunchRecorder;
  signIns: SignIns;
  signOutCookie: SignOutCookie;
  audit: AuditLog;
  labs: Lab[];
  /** PUBLIC_URL: the launch URL registered at every LMS is built on it, never on a request's Host. */
  publicUrl: URL;
  now: () => number;
}

interface Ticket {
  user: Me;
  landing: string;
  platformId: string;
  /** Set when nothing bound the launch to this browser: the person confirms who they are first. */
  confirm?: { platformName: string; course: string | null };
}

const loginCookiePrefix = "lab_lti_login_";
/** The cookie a login leaves for its launch: named by the state's hash, so logins in two tabs keep apart. */
const loginCookieOf = (state: string) =>
  `${loginCookiePrefix}${createHash("sha256").update(state).digest("base64url").slice(0, 16)}`;

/** A login initiation's parameters (query or form), those the console uses. */
function loginParamsOf(source: Record<string, unknown>) {
  const text = (name: string) => (typeof source[name] === "string" ? (source[name] as string) : undefined);
  return {
    iss: text("iss"),
    loginHint: text("login_hint"),
    targetLinkUri: text("target_link_uri"),
    messageHint: text("lti_message_hint"),
    clientId: text("client_id"),
  };
}

export async function registerLaunchRoutes(app: FastifyInstance, deps: LaunchRoutesDeps): Promise<void> {
  // Unauthenticated and each one stored: a burst for a class clicking at once behind one NAT, then a steady rate.
  const logins = new RateLimiter({ burst: 120, refillMs: 250 });
  const launchUrl = new URL(ltiLaunchPath, deps.publicUrl);

  await app.register(async (forms) => {
    // Only these routes read HTML forms: an LMS posts its login and launch that way.
    forms.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: 64 * 1024 },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    const fromLms = { config: { access: "public", crossSiteForm: true } } as const;

    const login = async (request: FastifyRequest, reply: FastifyReply) => {
      if (!logins.tryTake(addressKey(request.ip))) return refuse(request, reply, "lti-refused", 429);
      const params = loginParamsOf({ ...(request.query as object), ...(request.body as object | undefined) });
      // The hints are the LMS's own tokens (Canvas signs them): never in the log.
      const named = { iss: params.iss, clientId: params.clientId, target: params.targetLinkUri };
      if (!params.iss || !params.loginHint || !params.targetLinkUri) {
        request.log.warn(named, "LTI login without iss, login_hint or target_link_uri");
        return refuse(request, reply, "lti-refused", 400);
      }
      const platform = await findPlatform(params.iss, params.clientId);
      if (!platform) {
        request.log.warn(named, "LTI login from an unknown platform");
        return refuse(request, reply, "lti-platform-unknown", 400);
      }
      if (platform.status !== "active") return refuse(request, reply, "lti-platform-pending", 403);
      if (!isOnOrigin(params.targetLinkUri, deps.publicUrl)) {
        request.log.warn({ target: params.targetLinkUri }, "LTI login for another site");
        return refuse(request, reply, "lti-refused", 400);
      }
      const state = randomBytes(32).toString("base64url");
      const pending: PendingLogin = { platformId: platform.id, nonce: randomBytes(32).toString("base64url") };
      await deps.store.keep("login", state, JSON.stringify(pending), deps.now() + loginLifetimeMs);
      const authorization = new URL(platform.authLoginUrl);
      const query = {
        scope: "openid",
        response_type: "id_token",
        response_mode: "form_post",
        prompt: "none",
        client_id: platform.clientId,
        redirect_uri: launchUrl.href,
        login_hint: params.loginHint,
        state,
        nonce: pending.nonce,
        ...(params.messageHint ? { lti_message_hint: params.messageHint } : {}),
      };
      for (const [name, value] of Object.entries(query)) authorization.searchParams.set(name, value);
      // Only over https: SameSite=None, which the LMS's cross-site form post needs, requires Secure.
      if (request.protocol === "https") {
        reply.setCookie(loginCookieOf(state), "1", {
          httpOnly: true,
          secure: true,
          sameSite: "none",
          path: ltiLaunchPath,
          maxAge: loginLifetimeMs / 1000,
        });
      }
      return reply.redirect(authorization.href);
    };
    forms.get(ltiLoginPath, fromLms, login);
    forms.post(ltiLoginPath, fromLms, login);

    forms.post(ltiLaunchPath, fromLms, async (request, reply) => {
      const body = (request.body ?? {}) as Record<string, unknown>;
      if (typeof body.error === "string") {
        request.log.warn(
          { error: body.error, description: body.error_description },
          "the LMS answered the login with an error",
        );
        return refuse(request, reply, "lti-refused", 400);
      }
      const state = String(body.state ?? "");
      const boundHere = request.cookies[loginCookieOf(state)] === "1";
      if (boundHere)
        reply.clearCookie(loginCookieOf(state), { path: ltiLaunchPath, secure: true, sameSite: "none" });
      let launch: LtiLaunch;
      let deepLinking: Awaited<ReturnType<LaunchChecker["check"]>>["deepLinking"];
      try {
        ({ launch, deepLinking } = await deps.checker.check(String(body.id_token ?? ""), state));
      } catch (error) {
        if (!(error instanceof LaunchRefused)) throw error;
        request.log.warn({ reason: error.reason, detail: error.message }, "LTI launch refused");
        await deps.audit.record(
          {
            action: "sign-in-failed",
            actor: { username: "lti", role: null },
            details: { method: "lti", reason: error.reason, detail: error.message },
          },
          request,
        );
        return refuse(
          request,
          reply,
          error.reason === "platform-pending" ? "lti-platform-pending" : "lti-refused",
          403,
        );
      }
      if (deepLinking && launch.role !== "instructor") {
        request.log.warn(
          { username: launch.username, role: launch.role },
          "a deep-linking launch by someone not an instructor",
        );
        return refuse(request, reply, "lti-refused", 403);
      }
      await deps.grades.recordLaunch(launch).catch((error: unknown) =>
        // The person still gets in; their grades wait for the next launch to name the course.
        request.log.error({ err: error }, "recording an LTI launch failed"),
      );
      if (deepLinking) {
        // Not signed in even at top level: one way for frame and window alike (a browser that sends
        // no Sec-Fetch-Dest looks unframed), and the window goes back to the LMS right after, so a
        // sign-in would serve nothing but replace whoever was signed in to this browser before.
        const requestId = await keepDeepLinkRequest(deps.store, launch, deepLinking, deps.now());
        return reply.redirect(`/lti/deep-links/${requestId}`, 303);
      }
      const unbound = request.protocol === "https" && !boundHere;
      if (unbound && !isFramed(request)) {
        request.log.warn(
          { username: launch.username },
          "an LTI launch that this browser's login did not start",
        );
        return refuse(request, reply, "lti-refused", 403);
      }
      const user: Me = { username: launch.username, role: launch.role, sections: await sectionsOf(launch) };
      const landing = landingOf(launch);
      const ticket = randomBytes(32).toString("base64url");
      const kept: Ticket = {
        user,
        landing,
        platformId: launch.platform.id,
        ...(unbound
          ? { confirm: { platformName: launch.platform.name, course: launch.context.title ?? null } }
          : {}),
      };
      await deps.store.keep("ticket", ticket, JSON.stringify(kept), deps.now() + ticketLifetimeMs);
      const continueUrl = `/api/lti/continue?${new URLSearchParams({ ticket })}`;
      if (!isFramed(request)) return reply.redirect(continueUrl, 303);
      const lab = deps.labs.find((each) => each.id === launch.labId);
      return sendFramedPage(
        reply,
        200,
        lab?.title ?? "Lab Console",
        "Lab Console works in a window of its own, next to your course.",
        { href: continueUrl, label: "Open Lab Console in a new window" },
      );
    });

    const continuePath = "/api/lti/continue";
    forms.get<{ Querystring: { ticket?: string } }>(
      continuePath,
      { config: { access: "public" } },
      async (request, reply) => {
        const ticketId = request.query.ticket ?? "";
        const kept = ticketId ? await deps.store.peek("ticket", ticketId, deps.now()) : undefined;
        if (!kept) return reply.redirect(`/sign-in?${new URLSearchParams({ error: "expired" })}`);
        const ticket = JSON.parse(kept) as Ticket;
        if (!ticket.confirm) return signInWith(request, reply, ticketId);
        const from = ticket.confirm.course
          ? `${ticket.confirm.course} at ${ticket.confirm.platformName}`
          : ticket.confirm.platformName;
        return sendConfirmPage(reply, {
          title: "Continue to Lab Console",
          text: `You are signing in as ${ticket.user.username}, from ${from}. If that is not you, close this window.`,
          action: continuePath,
          fields: { ticket: ticketId },
          label: `Continue as ${ticket.user.username}`,
        });
      },
    );
    // The confirmation's own form: same-origin only, which a form shows by its Origin, not our header.
    forms.post<{ Body: { ticket?: string } }>(
      continuePath,
      { config: { access: "public", crossSiteForm: true } },
      async (request, reply) => {
        if (request.headers.origin !== deps.publicUrl.origin) {
          request.log.warn({ origin: request.headers.origin }, "an LTI sign-in confirmed from another site");
          return refuse(request, reply, "lti-refused", 403);
        }
        return signInWith(request, reply, String(request.body?.ticket ?? ""));
      },
    );
  });

  async function signInWith(request: FastifyRequest, reply: FastifyReply, ticketId: string) {
    const kept = ticketId ? await deps.store.take("ticket", ticketId, deps.now()) : undefined;
    if (!kept) return reply.redirect(`/sign-in?${new URLSearchParams({ error: "expired" })}`, 303);
    const ticket = JSON.parse(kept) as Ticket;
    // A fresh sign-in id, as at every sign-in: one planted before is worthless afterwards.
    const previous = findSignIn(request, deps.signIns);
    if (previous) await deps.signIns.end(previous);
    const signIn = deps.signIns.create(ticket.user, { via: "lti" });
    setSignInCookie(request, reply, signIn);
    deps.signOutCookie.set(request, reply, signIn);
    await deps.audit.record(
      { action: "sign-in", actor: ticket.user, details: { method: "lti", platform: ticket.platformId } },
      request,
    );
    return reply.redirect(ticket.landing, 303);
  }

  async function findPlatform(issuer: string, clientId: string | undefined): Promise<Platform | undefined> {
    const match = () => {
      const candidates = deps.platforms
        .withIssuer(issuer)
        .filter((each) => !clientId || each.clientId === clientId);
      // Several clients at one issuer (one LMS, several registrations): only its client_id tells which.
      // A pending registration never makes an active platform's login ambiguous: anyone may register.
      const active = candidates.filter((each) => each.status === "active");
      if (active.length > 0) return active.length === 1 ? active[0] : undefined;
      return candidates.length === 1 ? candidates[0] : undefined;
    };
    // Registered a moment ago, perhaps on another replica.
    return match() ?? (await deps.platforms.reload().then(match));
  }

  async function sectionsOf(launch: LtiLaunch): Promise<string[]> {
    if (launch.role === "instructor") return [];
    const fromRoster = await deps.grades
      .sectionsOf(launch.platform.id, launch.context.id, launch.userId)
      .catch(() => [] as string[]);
    const sections = [...new Set([...launch.sections, ...fromRoster])];
    return launch.role === "student" ? sections.slice(0, 1) : sections;
  }

  function landingOf(launch: LtiLaunch): string {
    const lab = deps.labs.find((each) => each.id === launch.labId);
    if (!lab) return "/";
    const id = encodeURIComponent(lab.id);
    if (launch.role === "instructor") return `/grading/${id}`;
    if (launch.role === "ta") return `/labs/${id}/wall`;
    return `/?${new URLSearchParams({ lab: lab.id })}`;
  }
}

function isOnOrigin(url: string, publicUrl: URL): boolean {
  try {
    return new URL(url, publicUrl).origin === publicUrl.origin;
  } catch {
    return false;
  }
}

/** Browsers say where a response goes; one bound for a frame must not rely on cookies. */
function isFramed(request: FastifyRequest): boolean {
  return request.headers["sec-fetch-dest"] === "iframe";
}

function refuse(request: FastifyRequest, reply: FastifyReply, error: SignInError, status: number) {
  const signInPage = `/sign-in?${new URLSearchParams({ error })}`;
  if (!isFramed(request)) return reply.redirect(signInPage);
  return sendFramedPage(
    reply,
    status,
    "This launch did not work",
    "Lab Console could not accept this launch from your course. Open Lab Console to see why.",
    { href: signInPage, label: "Open Lab Console" },
  );
}
