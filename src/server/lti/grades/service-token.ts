// Access tokens for a platform's services (AGS, NRPS): OAuth2 client credentials where the console
// proves who it is with a JWT signed by its own key (LTI 1.3 Security Framework, 1EdTech's client
// assertion profile), so no secret is shared with the LMS. A token is kept per platform and set of
// scopes until shortly before it expires, and one request per key is in flight at a time: a class
// of scores arriving at once asks the LMS once.
import { randomUUID } from "node:crypto";
import * as z from "zod/mini";
import type { Platform, ToolSigner } from "../model/model.ts";
import { LmsError, lmsRequest } from "./lms-http.ts";
import { abortable } from "../../../common/abortable.ts";

export const scopes = {
  lineItem: "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
  score: "https://purl.imsglobal.org/spec/lti-ags/scope/score",
  memberships: "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
} as const;

const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** The assertion is good for this long: enough for clocks a little apart, short if it leaks. */
const assertionLifetimeSeconds = 300;
/** Assumed when the LMS does not say (RFC 6749 leaves expires_in optional). */
const defaultLifetimeSeconds = 3600;
/** A token is renewed this long before it expires, so none expires on its way to the LMS. */
const renewBeforeMs = 60_000;

const TokenAnswer = z.object({
  access_token: z.string().check(z.minLength(1)),
  token_type: z.optional(z.string()),
  expires_in: z.optional(z.coerce.number()),
});

/** The token endpoint refused the console or answered nonsense: the platform's setup, not a score. */
export class TokenError extends LmsError {
  override readonly name = "TokenError";
}

interface Cached {
  token: string;
  renewAt: number;
}

export interface ServiceTokensDeps {
  signer: ToolSigner;
  now?: () => number;
}

export class ServiceTokens {
  private readonly cached = new Map<string, Cached>();
  private readonly requests = new Map<string, Promise<Cached>>();
  private readonly now: () => number;

  constructor(private readonly deps: ServiceTokensDeps) {
    this.now = deps.now ?? Date.now;
  }

  async token(platform: Platform, wanted: readonly string[], signal?: AbortSignal): Promise<string> {
    const key = tokenKey(platform, wanted);
    const cached = this.cached.get(key);
    if (cached && this.now() < cached.renewAt) return cached.token;
    let request = this.requests.get(key);
    if (!request) {
      // Shared by every caller waiting for this key, so no one caller's abort cancels it.
      request = this.request(platform, wanted)
        .then((fresh) => {
          this.cached.set(key, fresh);
          return fresh;
        })
        .finally(() => this.requests.delete(key));
      this.requests.set(key, request);
    }
    return (await (signal ? abortable(request, signal) : request)).token;
  }

  /**
   * Runs `send` with a token; when the LMS answers 401 (it revoked or forgot the token before it
   * said it would expire), drops that token and tries once more with a fresh one.
   */
  async authorized<T>(
    platform: Platform,
    wanted: readonly string[],
    signal: AbortSignal | undefined,
    send: (token: string) => Promise<T>,
  ): Promise<T> {
    const token = await this.token(platform, wanted, signal);
    try {
      return await send(token);
    } catch (error) {
      if (!(error instanceof LmsError) || error.status !== 401) throw error;
      this.forget(platform, wanted, token);
      return send(await this.token(platform, wanted, signal));
    }
  }

  /** Drops the cached token if it is still `token` (a fresher one fetched meanwhile stays). */
  forget(platform: Platform, wanted: readonly string[], token: string): void {
    const key = tokenKey(platform, wanted);
    if (this.cached.get(key)?.token === token) this.cached.delete(key);
  }

  private async request(platform: Platform, wanted: readonly string[]): Promise<Cached> {
    const issuedAt = Math.floor(this.now() / 1000);
    const assertion = await this.deps.signer.sign({
      iss: platform.clientId,
      sub: platform.clientId,
      aud: platform.tokenAudience ?? platform.tokenUrl.href,
      iat: issuedAt,
      exp: issuedAt + assertionLifetimeSeconds,
      jti: randomUUID(),
    });
    const what = `a service token for ${platform.name}`;
    let text: string;
    try {
      ({ text } = await lmsRequest({
        method: "POST",
        url: platform.tokenUrl,
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_assertion_type: assertionType,
          client_assertion: assertion,
          scope: [...wanted].sort().join(" "),
        }).toString(),
        maxBytes: 64 * 1024,
        timeoutMs: 15_000,
        what,
      }));
    } catch (error) {
      if (error instanceof LmsError) {
        throw new TokenError(error.status, error.message, error.retryAfterMs);
      }
      throw error;
    }
    const answer = parseTokenAnswer(text);
    if (!answer) {
      throw new TokenError(undefined, `${platform.tokenUrl.host} answered ${what} without a bearer token.`);
    }
    const lifetimeMs = (answer.expires_in ?? defaultLifetimeSeconds) * 1000;
    return {
      token: answer.access_token,
      renewAt: this.now() + lifetimeMs - Math.min(renewBeforeMs, lifetimeMs / 2),
    };
  }
}

function parseTokenAnswer(text: string): z.output<typeof TokenAnswer> | undefined {
  try {
    const parsed = z.safeParse(TokenAnswer, JSON.parse(text));
    if (!parsed.success) return undefined;
    const type = parsed.data.token_type;
    if (type !== undefined && type.toLowerCase() !== "bearer") return undefined;
    const lifetime = parsed.data.expires_in;
    const expires =
      lifetime !== undefined && Number.isFinite(lifetime) && lifetime > 0 ? lifetime : undefined;
    return { ...parsed.data, expires_in: expires };
  } catch {
    return undefined;
  }
}

function tokenKey(platform: Platform, wanted: readonly string[]): string {
  return JSON.stringify([platform.id, [...wanted].sort()]);
}
