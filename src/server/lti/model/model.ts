// What the parts of LTI 1.3 hand each other: a platform this console trusts, a checked launch, and
// the tool's signer. The launch side (login, launch, deep linking, registration, keys) produces them;
// the grades side (line items, the score outbox, rosters) consumes them.
import type { JWTPayload } from "jose";
import type { Role } from "../../../common/api.ts";

export interface Platform {
  /** Stable and URL-safe: names the platform in the API, the database and the logs. */
  id: string;
  /** Shown to people ("Canvas at State U"). */
  name: string;
  /** The `iss` of its id_tokens. */
  issuer: string;
  /** The client id it gave this console: the `aud` of its id_tokens. */
  clientId: string;
  /** Where the browser is sent to sign in at the platform (OIDC authorization endpoint). */
  authLoginUrl: URL;
  /** OAuth2 token endpoint for AGS and NRPS (client credentials with a JWT assertion). */
  tokenUrl: URL;
  /** The `aud` of this console's client assertions, when the platform wants other than tokenUrl. */
  tokenAudience: string | undefined;
  /** The platform's signing keys. */
  jwksUrl: URL;
  /** Deployments launches may come from; a launch from any other is refused. */
  deploymentIds: string[];
  /**
   * The email domains this platform speaks for: a person whose email is in one is named by it
   * (usernames.ts). Empty: everyone from it is named by their id at the platform.
   */
  emailDomains: string[];
  /** pending: registered dynamically and not yet approved by an instructor; launches are refused. */
  status: "active" | "pending";
  source: "config" | "dynamic";
}

/** A launch whose id_token passed every check: who, from where, for what. */
export interface LtiLaunch {
  platform: Platform;
  deploymentId: string;
  /** The person's id at the platform (`sub`). */
  userId: string;
  /** The Lab Console name they are signed in as. */
  username: string;
  name: string | undefined;
  email: string | undefined;
  role: Role;
  context: { id: string; title: string | undefined };
  /** Absent for a deep-linking request. */
  resourceLink: { id: string; title: string | undefined } | undefined;
  /** The lab the link points at (custom parameter `lab`), if any. */
  labId: string | undefined;
  /** The AGS claim, when the platform offers grades for this link. */
  ags: { scopes: string[]; lineItemsUrl: URL | undefined; lineItemUrl: URL | undefined } | undefined;
  /** The NRPS claim, when the platform offers the course's roster. */
  nrps: { membershipsUrl: URL } | undefined;
  /** Sections the launch itself names (LIS `course_section_sourcedid`), already made section names. */
  sections: string[];
  /** Custom parameter `post_self_checks` = "true": the link's choice to send self-checks too. */
  postSelfChecks: boolean;
}

/** Signs JWTs with this console's current key (its `kid` in the header), as published at /api/lti/jwks. */
export interface ToolSigner {
  sign(payload: JWTPayload): Promise<string>;
}

export interface PlatformDirectory {
  get(id: string): Platform | undefined;
  /** The platforms with this issuer (one per client id). */
  withIssuer(issuer: string): Platform[];
  list(): Platform[];
}

/** What a launch tells the grades side, and asks it (lti/grades). */
export interface LaunchRecorder {
  /** After every checked launch: the course, the person's link to the lab, the line item the claim names. */
  recordLaunch(launch: LtiLaunch): Promise<void>;
  /** Sections the stored roster gives this person in this course ([] when unknown). */
  sectionsOf(platformId: string, contextId: string, userId: string): Promise<string[]>;
  /**
   * Whether the course already has the lab's gradebook column: one this console knows, or one the
   * LMS lists for the lab. Deep linking then adds the link without a second column.
   */
  hasColumn(platformId: string, contextId: string, labId: string): Promise<boolean>;
}
