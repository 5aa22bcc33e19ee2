// Who may call each route, decided in one place before any handler runs. Every route names its rule
// in its config (`{ config: { access: "staff" } }`): the app refuses to start with a route that
// names none, and a request for such a route is refused anyway. Handlers read what the rule let in
// (the sign-in, the session) from here instead of checking again. The authorization matrix test
// reads these same rules and tries every route as every kind of person.
import type { FastifyInstance, FastifyRequest, RouteOptions } from "fastify";
import type { Me, Session } from "../../common/api.ts";
import type { ErrorReason } from "../../common/error-reasons.ts";
import { HttpError, parseOrThrow, unauthenticated } from "../http/errors.ts";
import type { OwnNames } from "../http/own-names.ts";
import { SessionIdParams } from "../http/params.ts";
import { checkBearerToken } from "./bearer-token.ts";
import { forwardHeader, verifyForward, type ForwardClaims } from "./forward-token.ts";

/**
 * - public: anyone.
 * - signed-in: anyone signed in.
 * - staff: TAs and instructors. instructor: instructors only.
 * - session: the owner of the session in `:id`, and staff who may see it (a TA of another section may
 *   not, access/sections.ts); to anyone else (another student) it does not exist.
 * - session-owner: only its owner; staff are refused, anyone who may not see it is told it does not exist.
 * - session-staff: staff only; its owner is refused, anyone who may not see it is told it does not exist.
 * - metrics-token: the bearer token METRICS_TOKEN, never a cookie.
 * - replica-forward: another replica's signed forward of a console (forward-token.ts).
 */
export const accessRules = [
  "public",
  "signed-in",
  "staff",
  "instructor",
  "session",
  "session-owner",
  "session-staff",
  "metrics-token",
  "replica-forward",
] as const;
export type AccessRule = (typeof accessRules)[number];

declare module "fastify" {
  interface FastifyInstance {
    /** Each route's rule, for the authorization matrix test and whoever reviews the policy. */
    accessPolicy: AccessPolicy;
  }
  interface FastifyContextConfig {
    access?: AccessRule;
    /** A websocket: a request that is no upgrade is answered 426, one from a foreign page 403. */
    websocket?: boolean;
  }
}

/** A sign-in that still stands (auth/sign-ins.ts keeps them). */
export interface StandingSignIn {
  id: string;
  user: Me;
  expiresAt: number;
  /** lti: an LMS's launch signed this person in (auth/sign-ins.ts). */
  via?: "lti";
}

export interface AccessPolicyDeps {
  /** The sign-in a request's cookie carries, if it still stands. */
  signIn(request: FastifyRequest): StandingSignIn | undefined;
  /** The session as this person may see it; throws "not found" when they may not. */
  session(user: Me, id: string): Promise<Session>;
  /** Whether a request is a websocket upgrade (console/websocket-upgrade.ts). */
  isUpgrade(request: FastifyRequest): boolean;
  ownNames: OwnNames;
  /** Unset: metrics are off, and /metrics answers 404. */
  metricsToken?: string;
  /** The secret replicas sign console forwards with. */
  forwardSecret: string;
}

/** What a request was let in as; each part is there when its rule asks for it. */
interface Grant {
  signIn?: StandingSignIn;
  session?: Session;
  forward?: ForwardClaims;
}

const grants = new WeakMap<FastifyRequest, Grant>();

export interface DeclaredAccess {
  access: AccessRule;
  websocket: boolean;
}

export interface AccessPolicy {
  /** Each route's rule, by "METHOD url" as the router prints it; complete once the app is ready. */
  routes(): ReadonlyMap<string, DeclaredAccess>;
}

export function enforceAccess(app: FastifyInstance, deps: AccessPolicyDeps): AccessPolicy {
  const routes: RouteOptions[] = [];
  const declared = new Map<string, DeclaredAccess>();
  // Read when the app is ready, not as each route is added: a plugin's routes get their rule from a
  // hook of the plugin's own (spa/static.ts), which runs after this one.
  app.addHook("onRoute", (route) => void routes.push(route));
  app.addHook("onReady", async () => {
    const undeclared: string[] = [];
    for (const route of routes) {
      const access = route.config?.access;
      if (!access) undeclared.push(`${[route.method].flat().join(",")} ${route.url}`);
      for (const method of [route.method].flat()) {
        if (access) declared.set(`${method} ${route.url}`, { access, websocket: !!route.config?.websocket });
      }
    }
    if (undeclared.length > 0) {
      throw new Error(`Routes without an access rule (access/policy.ts): ${undeclared.join(", ")}`);
    }
  });
  const checkMetricsToken = checkBearerToken(deps.metricsToken);

  // After the body is read, as each handler checked before: a body over the limit is refused (413)
  // whoever sends it.
  app.addHook("preHandler", async (request, reply) => {
    // No route: the not-found answer (or the SPA's index.html) protects nothing.
    if (request.is404) return;
    const { access, websocket } = request.routeOptions.config;
    if (websocket && !deps.isUpgrade(request)) {
      throw new HttpError(426, "upgrade_required", "This is a websocket; open it from its page.");
    }
    // A browser's socket comes from our own page only; another replica's carries no Origin, and its
    // signed forward is the proof.
    if (websocket && access !== "replica-forward") checkSocketOrigin(request, deps.ownNames);
    switch (access) {
      case "public":
        return;
      case "metrics-token":
        return checkMetricsToken(request, reply);
      case "replica-forward":
        return grantForward(request, deps.forwardSecret);
      case undefined:
        throw new HttpError(403, "forbidden", "This route declares no access rule.");
      default:
        return grantSignedIn(request, access, deps);
    }
  });

  const policy: AccessPolicy = { routes: () => declared };
  app.decorate("accessPolicy", policy);
  return policy;
}

async function grantSignedIn(
  request: FastifyRequest,
  rule: Exclude<AccessRule, "public" | "metrics-token" | "replica-forward">,
  deps: AccessPolicyDeps,
): Promise<void> {
  const signIn = deps.signIn(request);
  if (!signIn) throw unauthenticated();
  const { user } = signIn;
  const staff = user.role === "ta" || user.role === "instructor";
  grants.set(request, { signIn });
  switch (rule) {
    case "signed-in":
      return;
    case "staff":
      if (!staff) throw forbidden("staff_only", "Only TAs and instructors can do this.");
      return;
    case "instructor":
      if (user.role !== "instructor") throw forbidden("instructor_only", "Only instructors can do this.");
      return;
  }
  const { id } = parseOrThrow(SessionIdParams, request.params);
  const session = await deps.session(user, id);
  const owner = session.owner === user.username;
  if (rule === "session-owner" && !owner) {
    throw forbidden("owner_only", "Only the student whose session this is can do this.");
  }
  if (rule === "session-staff" && !staff)
    throw forbidden("staff_only", "Only a TA or instructor can do this.");
  grants.set(request, { signIn, session });
}

function grantForward(request: FastifyRequest, secret: string): void {
  const { id } = parseOrThrow(SessionIdParams, request.params);
  const header = request.headers[forwardHeader];
  const forward = verifyForward(secret, Array.isArray(header) ? header[0] : header, id);
  if (!forward) throw new HttpError(401, "unauthenticated", "A replica's signed forward is required.");
  grants.set(request, { forward });
}

/** A page elsewhere cannot open a socket with the person's cookies (no CORS protects websockets). */
function checkSocketOrigin(request: FastifyRequest, ownNames: OwnNames): void {
  const origin = request.headers.origin;
  if (origin === undefined) {
    throw new HttpError(403, "forbidden", "Connections must come from the Lab Console page.");
  }
  if (!ownNames.isOwnOrigin(origin, request)) {
    throw new HttpError(403, "forbidden", `Connections from ${origin} are not allowed.`);
  }
}

function forbidden(reason: ErrorReason, message: string): HttpError {
  return new HttpError(403, "forbidden", message, reason);
}

function granted(request: FastifyRequest): Grant {
  const grant = grants.get(request);
  if (!grant) throw new Error(`${request.method} ${request.url}: its access rule grants nothing to read`);
  return grant;
}

/** The sign-in a route's rule let in (any rule but public, metrics-token and replica-forward). */
export function grantedSignIn(request: FastifyRequest): StandingSignIn {
  const { signIn } = granted(request);
  if (!signIn) throw new Error(`${request.method} ${request.url}: its access rule lets in no sign-in`);
  return signIn;
}

export const signedInUser = (request: FastifyRequest): Me => grantedSignIn(request).user;

/** The session in `:id` as its person may see it (the session rules). */
export function grantedSession(request: FastifyRequest): Session {
  const { session } = granted(request);
  if (!session) throw new Error(`${request.method} ${request.url}: its access rule lets in no session`);
  return session;
}

/** Another replica's forward (replica-forward). */
export function grantedForward(request: FastifyRequest): ForwardClaims {
  const { forward } = granted(request);
  if (!forward) throw new Error(`${request.method} ${request.url}: its access rule lets in no forward`);
  return forward;
}
