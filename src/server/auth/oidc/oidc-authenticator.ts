// Sign-in with an OpenID Connect provider (openid-client): the authorization code flow with PKCE,
// state and nonce, as a confidential client. The provider's metadata is discovered on first use and
// kept; a provider that is down at start-up does not keep the console from starting.
import * as oidc from "openid-client";
import type { Me } from "../../../common/api.ts";
import type { OidcAuthenticator, OidcSignInResult, PendingOidcSignIn } from "../authenticator.ts";
import { groupsFromClaim, roleForGroups, type RoleGroups } from "./role-groups.ts";
import { sectionsForGroups } from "./section-groups.ts";

export interface OidcSettings {
  issuerUrl: URL;
  clientId: string;
  clientSecret: string;
  /** This console's callback, registered at the provider: <public URL>/api/auth/oidc/callback. */
  redirectUrl: URL;
  /** Where the provider sends the browser after signing out (registered at the provider too). */
  postLogoutRedirectUrl: URL;
  /** Space-separated; always includes "openid". */
  scopes: string;
  usernameClaim: string;
  groupsClaim: string;
  roleGroups: RoleGroups;
  /** Groups starting with it name sections (section-groups.ts); undefined: a course without sections. */
  sectionGroupPrefix: string | undefined;
  providerName: string;
}

export const oidcCallbackPath = "/api/auth/oidc/callback";

export function createOidcAuthenticator(
  settings: OidcSettings,
  { log }: { log?: { warn(message: string): void } } = {},
): OidcAuthenticator {
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = () =>
    (discovered ??= discover(settings).catch((error: unknown) => {
      // Not kept: the next sign-in tries again.
      discovered = undefined;
      throw error;
    }));
  // Found out now rather than at the first student's sign-in: a wrong issuer URL shows in the log.
  configuration().catch((error: unknown) =>
    log?.warn(
      `Reading the OpenID provider's metadata at ${settings.issuerUrl.href} failed (each sign-in tries again): ${describe(error)}`,
    ),
  );

  return {
    mode: "oidc",
    providerName: settings.providerName,
    redirectUrl: settings.redirectUrl,

    async beginSignIn() {
      const config = await configuration();
      const pending: PendingOidcSignIn = {
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        codeVerifier: oidc.randomPKCECodeVerifier(),
      };
      const authorizationUrl = oidc.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUrl.href,
        scope: settings.scopes,
        state: pending.state,
        nonce: pending.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
        code_challenge_method: "S256",
      });
      return { authorizationUrl, pending };
    },

    async completeSignIn(callbackUrl, pending) {
      try {
        const config = await configuration();
        const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          pkceCodeVerifier: pending.codeVerifier,
          idTokenExpected: true,
        });
        const idClaims = tokens.claims();
        if (!idClaims) return failed("failed", null, "the provider sent no ID token");
        let claims: Record<string, unknown> = idClaims;
        // Many providers put profile and group claims only in the UserInfo answer.
        const missing = !(settings.usernameClaim in claims) || !(settings.groupsClaim in claims);
        if (missing && config.serverMetadata().userinfo_endpoint) {
          const userInfo = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
          claims = { ...userInfo, ...idClaims };
        }
        const username = claims[settings.usernameClaim];
        if (typeof username !== "string" || username.length === 0 || username.length > 200) {
          return failed("failed", null, `the provider sent no usable "${settings.usernameClaim}" claim`);
        }
        const groups = groupsFromClaim(claims[settings.groupsClaim]);
        const role = roleForGroups(groups, settings.roleGroups);
        if (!role) {
          return failed(
            "no-role",
            username,
            `${username} is in none of the mapped groups (has: ${groups.join(", ") || "none"})`,
          );
        }
        const user: Me = { username, role, sections: sectionsForGroups(groups, settings.sectionGroupPrefix) };
        return { ok: true, user, signOutUrl: endSessionUrl(config, tokens.id_token) };
      } catch (error) {
        return failed(classify(error), null, describe(error));
      }
    },
  };

  function endSessionUrl(config: oidc.Configuration, idToken: string | undefined): URL | undefined {
    if (!config.serverMetadata().end_session_endpoint) return undefined;
    return oidc.buildEndSessionUrl(config, {
      post_logout_redirect_uri: settings.postLogoutRedirectUrl.href,
      ...(idToken ? { id_token_hint: idToken } : {}),
    });
  }
}

async function discover(settings: OidcSettings): Promise<oidc.Configuration> {
  const insecure = settings.issuerUrl.protocol === "http:" ? [oidc.allowInsecureRequests] : [];
  const found = await oidc.discovery(
    settings.issuerUrl,
    settings.clientId,
    settings.clientSecret,
    undefined,
    {
      execute: insecure,
      timeout: 10,
    },
  );
  // HTTP Basic is what every provider must accept (and some accept nothing else); POST only for a
  // provider that says it takes POST but not Basic.
  const methods = found.serverMetadata().token_endpoint_auth_methods_supported;
  const postOnly =
    methods !== undefined &&
    !methods.includes("client_secret_basic") &&
    methods.includes("client_secret_post");
  const config = new oidc.Configuration(
    found.serverMetadata(),
    settings.clientId,
    settings.clientSecret,
    postOnly ? oidc.ClientSecretPost(settings.clientSecret) : oidc.ClientSecretBasic(settings.clientSecret),
  );
  for (const allow of insecure) allow(config);
  config.timeout = 10;
  return config;
}

function failed(
  reason: Exclude<OidcSignInResult, { ok: true }>["reason"],
  username: string | null,
  detail: string,
) {
  return { ok: false as const, reason, username, detail };
}

function classify(error: unknown): Exclude<OidcSignInResult, { ok: true }>["reason"] {
  if (error instanceof oidc.AuthorizationResponseError) {
    return error.error === "access_denied" ? "cancelled" : "failed";
  }
  // fetch() failing outright, or the provider's answer timing out: it is not there.
  if (error instanceof TypeError && error.message === "fetch failed") return "unavailable";
  if (error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return "unavailable";
  }
  return "failed";
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  const code = "code" in error && typeof error.code === "string" ? ` (${error.code})` : "";
  return `${error.message}${code}${cause}`;
}
