// LTI Dynamic Registration 1.0: the platform's OpenID configuration, the registration start URL an
// admin opens, and the registration endpoint the tool posts its client metadata to.
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import type { PlatformContext } from "./platform-context.ts";
import { HttpFailure, readJson, sendJson } from "./platform-http.ts";
import { agsScopes, nrpsScope } from "./platform-launch.ts";
import { newId } from "./platform-state.ts";

const platformConfigurationClaim = "https://purl.imsglobal.org/spec/lti-platform-configuration";
const toolConfigurationClaim = "https://purl.imsglobal.org/spec/lti-tool-configuration";
const registrationTokenLifetimeMs = 60 * 60_000;

export function openIdConfiguration(platform: PlatformContext): Record<string, unknown> {
  const { url } = platform;
  return {
    issuer: url,
    authorization_endpoint: `${url}/auth`,
    token_endpoint: `${url}/token`,
    token_endpoint_auth_methods_supported: ["private_key_jwt"],
    token_endpoint_auth_signing_alg_values_supported: ["RS256"],
    jwks_uri: `${url}/jwks`,
    registration_endpoint: `${url}/register`,
    scopes_supported: ["openid", ...Object.values(agsScopes), nrpsScope],
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    claims_supported: ["iss", "sub", "aud", "name", "given_name", "family_name", "email"],
    [platformConfigurationClaim]: {
      product_family_code: "lab-console-test-platform",
      version: "1",
      messages_supported: [
        { type: "LtiResourceLinkRequest" },
        { type: "LtiDeepLinkingRequest", placements: ["ContentArea"] },
      ],
    },
  };
}

/** RFC 7591's error answer. */
function refuse(description: string, code = "invalid_client_metadata"): never {
  throw new RegistrationError(code, description);
}

class RegistrationError extends Error {
  constructor(
    readonly code: string,
    description: string,
  ) {
    super(description);
  }
}

function absoluteUrl(value: unknown, name: string, code?: string): string {
  if (typeof value !== "string" || !URL.canParse(value)) refuse(`${name} must be an absolute URL`, code);
  const protocol = new URL(value).protocol;
  if (protocol !== "https:" && protocol !== "http:") refuse(`${name} must be an http(s) URL`, code);
  return value;
}

function stringList(value: unknown, name: string): string[] {
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== "string"))
    refuse(`${name} must be a list of strings`);
  return value as string[];
}

export class Registrations {
  private readonly tokens = new Map<string, number>();

  constructor(private readonly platform: PlatformContext) {}

  /** The tool's registration initiation URL with the platform's configuration and a one-use token. */
  startUrl(toolInitiationUrl: string): string {
    const token = randomBytes(24).toString("base64url");
    this.tokens.set(token, Date.now() + registrationTokenLifetimeMs);
    const start = new URL(toolInitiationUrl);
    start.searchParams.set("openid_configuration", `${this.platform.url}/.well-known/openid-configuration`);
    start.searchParams.set("registration_token", token);
    return start.href;
  }

  /** POST /register */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== "POST") throw new HttpFailure(405, "POST");
    const token = /^Bearer (\S+)$/i.exec(request.headers.authorization ?? "")?.[1];
    const expiresAt = token ? this.tokens.get(token) : undefined;
    if (!token || expiresAt === undefined || expiresAt < Date.now())
      throw new HttpFailure(401, "a registration token from this platform is required (each is good once)", {
        "www-authenticate": 'Bearer error="invalid_token"',
      });
    const body = await readJson(request, "application/json");
    try {
      const answer = this.register(body);
      this.tokens.delete(token);
      sendJson(response, 200, answer);
    } catch (error) {
      if (!(error instanceof RegistrationError)) throw error;
      sendJson(response, 400, { error: error.code, error_description: error.message });
    }
  }

  private register(raw: unknown): Record<string, unknown> {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw))
      refuse("the registration must be a JSON object");
    const body = raw as Record<string, unknown>;
    if (body.application_type !== "web") refuse("application_type must be web");
    const grantTypes = stringList(body.grant_types, "grant_types");
    if (!grantTypes.includes("implicit") || !grantTypes.includes("client_credentials"))
      refuse("grant_types must include implicit and client_credentials");
    if (!stringList(body.response_types, "response_types").includes("id_token"))
      refuse("response_types must include id_token");
    if (body.token_endpoint_auth_method !== "private_key_jwt")
      refuse("token_endpoint_auth_method must be private_key_jwt");
    const loginUrl = absoluteUrl(body.initiate_login_uri, "initiate_login_uri");
    const redirectUris = stringList(body.redirect_uris, "redirect_uris");
    if (redirectUris.length === 0) refuse("redirect_uris must not be empty", "invalid_redirect_uri");
    for (const uri of redirectUris) absoluteUrl(uri, "each redirect_uri", "invalid_redirect_uri");
    const jwksUrl = absoluteUrl(body.jwks_uri, "jwks_uri");
    if (body.scope !== undefined && typeof body.scope !== "string") refuse("scope must be a string");
    const offered = ["openid", ...Object.values(agsScopes), nrpsScope];
    const scope = ((body.scope as string | undefined) ?? "")
      .split(" ")
      .filter((entry) => offered.includes(entry));

    const config = body[toolConfigurationClaim];
    if (typeof config !== "object" || config === null) refuse(`${toolConfigurationClaim} is required`);
    const toolConfig = config as Record<string, unknown>;
    if (typeof toolConfig.domain !== "string" || toolConfig.domain === "")
      refuse("the tool configuration needs a domain");
    const targetLinkUri = absoluteUrl(toolConfig.target_link_uri, "target_link_uri");
    const messages = toolConfig.messages ?? [];
    if (!Array.isArray(messages)) refuse("messages must be a list");
    const deepLinking = (messages as Array<Record<string, unknown>>).find(
      (message) => message?.type === "LtiDeepLinkingRequest",
    );

    const clientId = newId("client");
    const deploymentId = newId("deployment");
    this.platform.state.registerTool({
      clientId,
      loginUrl,
      redirectUris,
      jwksUrl,
      deploymentId,
      targetLinkUri,
      deepLinkingUrl:
        typeof deepLinking?.target_link_uri === "string" ? deepLinking.target_link_uri : targetLinkUri,
      ...(typeof body.client_name === "string" ? { name: body.client_name } : {}),
    });
    return {
      ...body,
      client_id: clientId,
      scope: scope.join(" "),
      [toolConfigurationClaim]: { ...toolConfig, deployment_id: deploymentId },
    };
  }
}
