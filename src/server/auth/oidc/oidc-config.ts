// The OIDC_* variables, read when AUTH_MODE=oidc. Problems come back as a list so that config.ts
// reports them with every other bad value in one go.
import { z } from "zod";
import { secureUrl } from "../../http/secure-url.ts";
import { oidcCallbackPath, type OidcSettings } from "./oidc-authenticator.ts";
import { RoleGroups } from "./role-groups.ts";

const required = "required with AUTH_MODE=oidc";

// Tokens and codes cross these URLs.
const providerUrl = secureUrl(required);

const roleGroupsJson = z
  .string({ error: `${required}; e.g. {"instructor":["course-staff"],"ta":["course-tas"]}` })
  .transform((text, context) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      context.addIssue({ code: "custom", message: "must be JSON" });
      return z.NEVER;
    }
  })
  .pipe(RoleGroups);

const OidcEnv = z.object({
  OIDC_ISSUER_URL: providerUrl,
  OIDC_CLIENT_ID: z.string({ error: required }),
  OIDC_CLIENT_SECRET: z.string({ error: required }),
  OIDC_REDIRECT_URL: providerUrl.optional(),
  PUBLIC_URL: providerUrl.optional(),
  OIDC_SCOPES: z
    .string()
    .default("openid profile")
    .refine((scopes) => scopes.split(/\s+/).includes("openid"), "must include openid"),
  OIDC_USERNAME_CLAIM: z.string().default("preferred_username"),
  OIDC_GROUPS_CLAIM: z.string().default("groups"),
  OIDC_ROLE_GROUPS: roleGroupsJson,
  // A stray space from a copied value would match no group, and put nobody in a section unseen.
  OIDC_SECTION_GROUP_PREFIX: z
    .string()
    .max(200)
    .refine((prefix) => prefix.trim() === prefix, "must not start or end with spaces")
    .optional(),
  OIDC_PROVIDER_NAME: z.string().max(40).optional(),
});

/** `env` holds only the variables that are set (not empty). */
export function readOidcSettings(env: Record<string, string | undefined>): {
  settings: OidcSettings | undefined;
  problems: string[];
} {
  const parsed = OidcEnv.safeParse(env);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  if (env.OIDC_REDIRECT_URL === undefined && env.PUBLIC_URL === undefined) {
    problems.push(
      `OIDC_REDIRECT_URL: ${required}, or PUBLIC_URL (the address people open) to derive it as <PUBLIC_URL>${oidcCallbackPath}`,
    );
  }
  if (!parsed.success || problems.length > 0) return { settings: undefined, problems };
  const values = parsed.data;
  const redirectUrl = values.OIDC_REDIRECT_URL ?? new URL(oidcCallbackPath, values.PUBLIC_URL);
  return {
    settings: {
      issuerUrl: values.OIDC_ISSUER_URL,
      clientId: values.OIDC_CLIENT_ID,
      clientSecret: values.OIDC_CLIENT_SECRET,
      redirectUrl,
      postLogoutRedirectUrl: new URL("/sign-in", redirectUrl),
      scopes: values.OIDC_SCOPES,
      usernameClaim: values.OIDC_USERNAME_CLAIM,
      groupsClaim: values.OIDC_GROUPS_CLAIM,
      roleGroups: values.OIDC_ROLE_GROUPS,
      sectionGroupPrefix: values.OIDC_SECTION_GROUP_PREFIX,
      providerName: values.OIDC_PROVIDER_NAME ?? values.OIDC_ISSUER_URL.hostname,
    },
    problems: [],
  };
}
