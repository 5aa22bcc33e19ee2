// The OAuth 2 token endpoint of the 1EdTech Security Framework: client_credentials with a JWT client
// assertion the tool signs with its own key, and the opaque bearer tokens the services accept.
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { decodeJwt, jwtVerify } from "jose";
import type { PlatformContext } from "./platform-context.ts";
import { HttpFailure, readForm, sendJson } from "./platform-http.ts";
import { agsScopes, nrpsScope } from "./platform-launch.ts";

const grantableScopes: readonly string[] = [...Object.values(agsScopes), nrpsScope];
const jwtBearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const tokenLifetimeMs = 60 * 60_000;

interface IssuedToken {
  clientId: string;
  scopes: string[];
  expiresAt: number;
}

/** An RFC 6749 error answer. */
class TokenError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    description: string,
  ) {
    super(description);
  }
}

export class TokenEndpoint {
  private readonly usedAssertions = new Set<string>();
  private readonly tokens = new Map<string, IssuedToken>();

  constructor(private readonly platform: PlatformContext) {}

  get url(): string {
    return `${this.platform.url}/token`;
  }

  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const form = await readForm(request);
    const requestedScopes = (form.get("scope") ?? "").split(" ").filter(Boolean);
    const record = {
      requestedScopes,
      grantedScopes: [] as string[],
      clientId: undefined as string | undefined,
    };
    try {
      const { clientId, scopes } = await this.grant(form, requestedScopes, (id) => (record.clientId = id));
      const accessToken = randomBytes(24).toString("base64url");
      this.tokens.set(accessToken, { clientId, scopes, expiresAt: Date.now() + tokenLifetimeMs });
      this.platform.state.tokenRequests.push({ ...record, grantedScopes: scopes, status: 200 });
      sendJson(response, 200, {
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: tokenLifetimeMs / 1000,
        scope: scopes.join(" "),
      });
    } catch (error) {
      if (!(error instanceof TokenError)) throw error;
      this.platform.state.tokenRequests.push({
        ...record,
        status: error.status,
        error: `${error.code}: ${error.message}`,
      });
      sendJson(response, error.status, { error: error.code, error_description: error.message });
    }
  }

  private async grant(
    form: URLSearchParams,
    requestedScopes: string[],
    identified: (clientId: string) => void,
  ): Promise<{ clientId: string; scopes: string[] }> {
    if (form.get("grant_type") !== "client_credentials")
      throw new TokenError(400, "unsupported_grant_type", "grant_type must be client_credentials");
    if (form.get("client_assertion_type") !== jwtBearer)
      throw new TokenError(400, "invalid_request", `client_assertion_type must be ${jwtBearer}`);
    const assertion = form.get("client_assertion");
    if (!assertion) throw new TokenError(400, "invalid_request", "client_assertion is missing");

    let claimedClient: unknown;
    try {
      claimedClient = decodeJwt(assertion).iss;
    } catch {
      throw new TokenError(401, "invalid_client", "client_assertion is not a JWT");
    }
    const tool = typeof claimedClient === "string" ? this.platform.state.tool(claimedClient) : undefined;
    if (!tool) throw new TokenError(401, "invalid_client", "the assertion's iss names no registered client");
    identified(tool.clientId);
    const formClient = form.get("client_id");
    if (formClient && formClient !== tool.clientId)
      throw new TokenError(401, "invalid_client", "client_id differs from the assertion's iss");

    let jti: unknown;
    try {
      const { payload } = await jwtVerify(assertion, this.platform.toolKeys(tool.jwksUrl), {
        issuer: tool.clientId,
        subject: tool.clientId,
        audience: this.url,
        algorithms: ["RS256"],
        requiredClaims: ["exp", "iat", "jti"],
      });
      jti = payload.jti;
    } catch (error) {
      throw new TokenError(401, "invalid_client", `client_assertion refused: ${(error as Error).message}`);
    }
    const assertionKey = `${tool.clientId} ${String(jti)}`;
    if (this.usedAssertions.has(assertionKey))
      throw new TokenError(401, "invalid_client", "client_assertion jti was already used");
    this.usedAssertions.add(assertionKey);

    const scopes = requestedScopes.filter((scope) => grantableScopes.includes(scope));
    if (scopes.length === 0) throw new TokenError(400, "invalid_scope", "no grantable scope was requested");
    return { clientId: tool.clientId, scopes };
  }

  /** The caller's grant when its bearer token holds one of `scopes`; 401 or 403 otherwise. */
  authorize(request: IncomingMessage, scopes: readonly string[]): IssuedToken {
    const header = request.headers.authorization ?? "";
    const match = /^Bearer (\S+)$/i.exec(header);
    const token = match ? this.tokens.get(match[1]!) : undefined;
    if (!token || token.expiresAt < Date.now())
      throw new HttpFailure(401, "a valid bearer token is required", {
        "www-authenticate": 'Bearer error="invalid_token"',
      });
    if (!scopes.some((scope) => token.scopes.includes(scope)))
      throw new HttpFailure(403, `the token lacks a scope: ${scopes.join(" or ")}`, {
        "www-authenticate": 'Bearer error="insufficient_scope"',
      });
    return token;
  }
}
