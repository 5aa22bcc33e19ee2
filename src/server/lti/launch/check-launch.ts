// The checks of LTI 1.3 Core §5.1.3 on a launch's id_token, in the order that makes each failure say
// the right thing: the login it answers (state, one use, ten minutes), the signature against the
// platform's published keys, issuer, audience and azp, expiry, the nonce (the login's own, and never
// seen before), the deployment, and the claims. Nothing is changed before every check has passed,
// except that the state and the nonce are used up, so a token cannot be tried twice.
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from "jose";
import { ltiRole } from "../model/membership-roles.ts";
import { claimNames, LaunchClaims } from "./claims.ts";
import type { LtiLaunchStore } from "./store/repository.ts";
import type { LtiLaunch, Platform, PlatformDirectory } from "../model/model.ts";
import { ltiUsername } from "../model/usernames.ts";
import { ltiSectionNames } from "../model/section-names.ts";

/** What a login initiation keeps for its launch, under its state. */
export interface PendingLogin {
  platformId: string;
  nonce: string;
}

export type LaunchRefusalReason =
  | "expired-state"
  | "unknown-platform"
  | "platform-pending"
  | "bad-token"
  | "replayed"
  | "unknown-deployment"
  | "bad-claims"
  | "no-role";

export class LaunchRefused extends Error {
  constructor(
    readonly reason: LaunchRefusalReason,
    detail: string,
  ) {
    super(detail);
  }
}

export interface DeepLinkingSettings {
  returnUrl: string;
  acceptMultiple: boolean;
  data: string | undefined;
}

export interface CheckedLaunch {
  launch: LtiLaunch;
  /** Present for a deep-linking request. */
  deepLinking: DeepLinkingSettings | undefined;
}

const clockToleranceSeconds = 60;

export class LaunchChecker {
  private readonly keySets = new Map<string, JWTVerifyGetKey>();

  constructor(
    private readonly deps: {
      platforms: PlatformDirectory;
      store: LtiLaunchStore;
      now: () => number;
      /** Platform keys; default: the platform's JWKS URL, fetched and cached by jose. */
      keysOf?: (platform: Platform) => JWTVerifyGetKey;
    },
  ) {}

  async check(idToken: string, state: string): Promise<CheckedLaunch> {
    const kept = state ? await this.deps.store.take("login", state, this.deps.now()) : undefined;
    if (!kept)
      throw new LaunchRefused(
        "expired-state",
        "no login is waiting for this state (expired, used, or never made here)",
      );
    const login = JSON.parse(kept) as PendingLogin;
    const platform = this.deps.platforms.get(login.platformId);
    if (!platform)
      throw new LaunchRefused("unknown-platform", `platform ${login.platformId} is no longer configured`);
    if (platform.status !== "active")
      throw new LaunchRefused("platform-pending", `${platform.name} awaits approval`);

    const payload = await this.verify(idToken, platform);
    const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    if ((audiences.length > 1 || payload.azp !== undefined) && payload.azp !== platform.clientId) {
      throw new LaunchRefused("bad-token", `azp ${String(payload.azp)} is not this console's client id`);
    }
    if (payload.nonce !== login.nonce)
      throw new LaunchRefused("replayed", "the id_token's nonce is not its login's");
    const nonceExpires = ((payload.exp ?? 0) + clockToleranceSeconds) * 1000;
    if (!(await this.deps.store.useNonce(platform.issuer, login.nonce, nonceExpires))) {
      throw new LaunchRefused("replayed", "the id_token's nonce was used before");
    }

    const parsed = LaunchClaims.safeParse(payload);
    if (!parsed.success) {
      const where = parsed.error.issues.map((issue) => issue.path.join(".")).join(", ");
      throw new LaunchRefused("bad-claims", `claims missing or malformed: ${where}`);
    }
    const claims = parsed.data;
    const deploymentId = claims[claimNames.deploymentId];
    // A platform that registered itself without naming a deployment takes launches from any of its own.
    if (platform.deploymentIds.length > 0 && !platform.deploymentIds.includes(deploymentId)) {
      throw new LaunchRefused(
        "unknown-deployment",
        `deployment ${deploymentId} is not one of ${platform.name}'s`,
      );
    }
    const role = ltiRole(claims[claimNames.roles]);
    if (!role)
      throw new LaunchRefused(
        "no-role",
        `no role this console knows in: ${claims[claimNames.roles].join(", ")}`,
      );
    const deepLinkingRequest = claims[claimNames.messageType] === "LtiDeepLinkingRequest";
    const settings = claims[claimNames.deepLinkingSettings];
    if (deepLinkingRequest && !settings)
      throw new LaunchRefused("bad-claims", "a deep-linking request without its settings");
    const resourceLink = claims[claimNames.resourceLink];
    if (!deepLinkingRequest && !resourceLink)
      throw new LaunchRefused("bad-claims", "a resource link launch without its link");

    const custom = claims[claimNames.custom] ?? {};
    const ags = claims[claimNames.ags];
    const nrps = claims[claimNames.nrps];
    const context = claims[claimNames.context];
    const section = claims[claimNames.lis]?.course_section_sourcedid;
    const launch: LtiLaunch = {
      platform,
      deploymentId,
      userId: claims.sub,
      username: ltiUsername(platform, { userId: claims.sub, email: claims.email }),
      name: claims.name,
      email: claims.email,
      role,
      context: { id: context.id, title: context.title ?? context.label },
      resourceLink:
        deepLinkingRequest || !resourceLink ? undefined : { id: resourceLink.id, title: resourceLink.title },
      labId: typeof custom.lab === "string" ? custom.lab : undefined,
      ags: ags && { scopes: ags.scope, lineItemsUrl: ags.lineitems, lineItemUrl: ags.lineitem },
      nrps: nrps && { membershipsUrl: nrps.context_memberships_url },
      sections: ltiSectionNames((section ?? "").split(",")),
      postSelfChecks: custom.post_self_checks === "true" || custom.post_self_checks === true,
    };
    return {
      launch,
      deepLinking:
        deepLinkingRequest && settings
          ? {
              returnUrl: settings.deep_link_return_url.href,
              acceptMultiple: settings.accept_multiple ?? true,
              data: settings.data,
            }
          : undefined,
    };
  }

  private async verify(idToken: string, platform: Platform) {
    try {
      const { payload } = await jwtVerify(idToken, this.keysOf(platform), {
        issuer: platform.issuer,
        audience: platform.clientId,
        algorithms: ["RS256", "RS384", "RS512", "PS256", "ES256"],
        clockTolerance: clockToleranceSeconds,
        requiredClaims: ["exp", "iat", "nonce", "sub"],
      });
      return payload;
    } catch (error) {
      const detail =
        error instanceof joseErrors.JOSEError
          ? `${error.code}: ${error.message}`
          : `the id_token: ${String(error)}`;
      throw new LaunchRefused("bad-token", detail);
    }
  }

  private keysOf(platform: Platform): JWTVerifyGetKey {
    if (this.deps.keysOf) return this.deps.keysOf(platform);
    let keys = this.keySets.get(platform.id);
    if (!keys) {
      // jose caches the set and fetches it again for a key id it has not seen: a platform's rotation needs nothing here.
      keys = createRemoteJWKSet(platform.jwksUrl, { timeoutDuration: 10_000, cooldownDuration: 30_000 });
      this.keySets.set(platform.id, keys);
    }
    return keys;
  }
}
