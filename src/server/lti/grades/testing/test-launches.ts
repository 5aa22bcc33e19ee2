// Launches from the test platform as the launch side hands them to the grades side: the platform's
// own login page, its authorization endpoint and its signed id_token, checked against its JWKS and
// read into an LtiLaunch. Only what the grades side reads is checked here; the launch side's tests
// check the rest (state, nonce replay, deployments).
import { randomUUID } from "node:crypto";
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import { ltiRole } from "../../model/membership-roles.ts";
import type { LtiLaunch, Platform, PlatformDirectory } from "../../model/model.ts";
import { ltiSectionNames } from "../../model/section-names.ts";
import type { TestPlatform } from "../../testing/test-platform.ts";
import { ltiUsername } from "../../model/usernames.ts";

const lti = "https://purl.imsglobal.org/spec/lti/claim";
const agsClaim = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint";
const nrpsClaim = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice";

/** The tool as registered at the test platform: its redirect URI is never reached by these launches. */
export const testTool = {
  clientId: "lab-console",
  deploymentId: "deployment-1",
  redirectUri: "http://127.0.0.1:9/api/lti/launch",
};

/** The test platform as the console's configuration names it. */
export function platformOf(lms: TestPlatform, id = "test-lms"): Platform {
  return {
    id,
    name: "Test LMS",
    issuer: lms.issuer,
    clientId: testTool.clientId,
    authLoginUrl: new URL(lms.authUrl),
    tokenUrl: new URL(lms.tokenUrl),
    tokenAudience: undefined,
    jwksUrl: new URL(lms.jwksUrl),
    deploymentIds: [testTool.deploymentId],
    emailDomains: ["school.example"],
    status: "active",
    source: "config",
  };
}

export function directoryOf(...platforms: Platform[]): PlatformDirectory {
  return {
    get: (id) => platforms.find((platform) => platform.id === id),
    withIssuer: (issuer) => platforms.filter((platform) => platform.issuer === issuer),
    list: () => [...platforms],
  };
}

function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [, name = "", value = ""] of html.matchAll(
    /<input type="hidden" name="([^"]*)" value="([^"]*)">/g,
  )) {
    fields[name] = value
      .replaceAll("&quot;", '"')
      .replaceAll("&#39;", "'")
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">")
      .replaceAll("&amp;", "&");
  }
  return fields;
}

async function page(url: string): Promise<string> {
  const response = await fetch(url);
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text}`);
  return text;
}

/** `sub` opens the resource link in the course, as a browser would: the LtiLaunch it leads to. */
export async function launch(
  lms: TestPlatform,
  platform: Platform,
  options: { sub: string; courseId: string; resourceLinkId: string },
): Promise<LtiLaunch> {
  const login = hiddenFields(await page(lms.launchUrl(options)));
  const authorize = new URL(lms.authUrl);
  for (const [name, value] of Object.entries({
    scope: "openid",
    response_type: "id_token",
    response_mode: "form_post",
    prompt: "none",
    client_id: login.client_id ?? "",
    redirect_uri: testTool.redirectUri,
    login_hint: login.login_hint ?? "",
    lti_message_hint: login.lti_message_hint ?? "",
    state: randomUUID(),
    nonce: randomUUID(),
  })) {
    authorize.searchParams.set(name, value);
  }
  const { id_token: idToken = "" } = hiddenFields(await page(authorize.href));
  const { payload } = await jwtVerify(idToken, createRemoteJWKSet(new URL(lms.jwksUrl)), {
    issuer: platform.issuer,
    audience: platform.clientId,
  });
  return launchOf(platform, payload);
}

function launchOf(platform: Platform, claims: JWTPayload): LtiLaunch {
  const claim = <T>(name: string) => claims[name] as T | undefined;
  const context = claim<{ id: string; title?: string }>(`${lti}/context`);
  const link = claim<{ id: string; title?: string }>(`${lti}/resource_link`);
  const custom = claim<Record<string, string>>(`${lti}/custom`) ?? {};
  const ags = claim<{ scope: string[]; lineitems?: string; lineitem?: string }>(agsClaim);
  const nrps = claim<{ context_memberships_url: string }>(nrpsClaim);
  const section = claim<{ course_section_sourcedid?: string }>(`${lti}/lis`)?.course_section_sourcedid;
  const userId = claims.sub ?? "";
  const email = typeof claims.email === "string" ? claims.email : undefined;
  if (!context) throw new Error("the launch names no context");
  return {
    platform,
    deploymentId: claim<string>(`${lti}/deployment_id`) ?? "",
    userId,
    username: ltiUsername(platform, { userId, email }),
    name: typeof claims.name === "string" ? claims.name : undefined,
    email,
    role: ltiRole(claim<string[]>(`${lti}/roles`) ?? []) ?? "student",
    context: { id: context.id, title: context.title },
    resourceLink: link && { id: link.id, title: link.title },
    labId: custom.lab,
    ags: ags && {
      scopes: ags.scope,
      lineItemsUrl: ags.lineitems === undefined ? undefined : new URL(ags.lineitems),
      lineItemUrl: ags.lineitem === undefined ? undefined : new URL(ags.lineitem),
    },
    nrps: nrps && { membershipsUrl: new URL(nrps.context_memberships_url) },
    sections: ltiSectionNames(section?.split(",") ?? []),
    postSelfChecks: custom.post_self_checks === "true",
  };
}
