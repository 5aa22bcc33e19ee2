// LTI Dynamic Registration 1.0: an LMS administrator pastes this console's registration URL into the
// LMS, which opens it with its own configuration's address and a one-time token; we read the LMS's
// configuration, register ourselves there, and keep the platform as pending. Anyone could open this
// URL with a configuration of their own making, so a registered platform signs nobody in until an
// instructor approves it in Lab Console, and the operator turns the route on at all
// (LTI_DYNAMIC_REGISTRATION=on). The console fetches only https addresses (plain http to loopback
// only when it runs on loopback itself, for tests), never follows a redirect, reads at most 256 KiB,
// and tells the anonymous visitor nothing of what those addresses answered (the log has it).
import { createHash } from "node:crypto";
import { isLoopbackUrl, secureUrl } from "../../http/secure-url.ts";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { addressKey } from "../../http/client-address.ts";
import { RateLimiter } from "../../http/rate-limit.ts";
import type { AuditLog } from "../../audit/audit-log.ts";
import type { LtiLaunchStore, StoredPlatform } from "./store/repository.ts";
import { ltiLaunchPath, ltiLoginPath } from "./lti-paths.ts";
import { sendRegisteredPage } from "./pages.ts";
import { lmsRequest, type LmsRequest } from "../grades/lms-http.ts";

const fetchTimeoutMs = 10_000;
const maxAnswerBytes = 256 * 1024;
export const ltiScopes = [
  "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
  "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
  "https://purl.imsglobal.org/spec/lti-ags/scope/score",
  "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
];

const PlatformConfiguration = z.object({
  issuer: z.string().min(1),
  authorization_endpoint: secureUrl(),
  token_endpoint: secureUrl(),
  jwks_uri: secureUrl(),
  registration_endpoint: secureUrl(),
  "https://purl.imsglobal.org/spec/lti-platform-configuration": z
    .object({ product_family_code: z.string().max(100) })
    .loose(),
});

const RegistrationAnswer = z.object({
  client_id: z.string().min(1).max(255),
  "https://purl.imsglobal.org/spec/lti-tool-configuration": z
    .object({ deployment_id: z.string().min(1).max(255).optional() })
    .loose()
    .optional(),
});

export class RegistrationFailed extends Error {}

/** Reads JSON from an LMS, with lmsRequest's limits: what comes back is not ours. */
async function fetchJson(
  url: URL,
  what: string,
  request: Pick<LmsRequest, "method" | "headers" | "body"> = {
    method: "GET",
    headers: { accept: "application/json" },
  },
): Promise<unknown> {
  const { text } = await lmsRequest({
    ...request,
    url,
    what,
    maxBytes: maxAnswerBytes,
    timeoutMs: fetchTimeoutMs,
  });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RegistrationFailed(`${url.href} did not answer JSON`);
  }
}

export async function registerAtPlatform(options: {
  configurationUrl: URL;
  registrationToken: string | undefined;
  publicUrl: URL;
  now: number;
}): Promise<StoredPlatform> {
  const parsed = PlatformConfiguration.safeParse(
    await fetchJson(options.configurationUrl, "its configuration"),
  );
  if (!parsed.success) {
    throw new RegistrationFailed(
      `the LMS's configuration lacks ${parsed.error.issues.map((issue) => issue.path.join(".")).join(", ")}`,
    );
  }
  const configuration = parsed.data;
  if (!isUnderIssuer(options.configurationUrl, configuration.issuer)) {
    throw new RegistrationFailed(
      `the configuration at ${options.configurationUrl.href} names another issuer, ${configuration.issuer}`,
    );
  }
  // Where the registration goes is the LMS's own: its configuration cannot send it to another site.
  if (configuration.registration_endpoint.origin !== options.configurationUrl.origin) {
    throw new RegistrationFailed(
      `the registration endpoint ${configuration.registration_endpoint.href} is on another site`,
    );
  }
  const launchUrl = new URL(ltiLaunchPath, options.publicUrl).href;
  const registration = {
    application_type: "web",
    response_types: ["id_token"],
    grant_types: ["implicit", "client_credentials"],
    initiate_login_uri: new URL(ltiLoginPath, options.publicUrl).href,
    redirect_uris: [launchUrl],
    client_name: "Lab Console",
    jwks_uri: new URL("/api/lti/jwks", options.publicUrl).href,
    token_endpoint_auth_method: "private_key_jwt",
    scope: ltiScopes.join(" "),
    "https://purl.imsglobal.org/spec/lti-tool-configuration": {
      domain: options.publicUrl.host,
      target_link_uri: launchUrl,
      description:
        "Student labs in virtual machines, with consoles in the browser and grading inside the guest.",
      claims: ["iss", "sub", "name", "email"],
      messages: [{ type: "LtiDeepLinkingRequest", target_link_uri: launchUrl, label: "Lab Console labs" }],
    },
  };
  const answer = RegistrationAnswer.safeParse(
    await fetchJson(configuration.registration_endpoint, "the registration", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        ...(options.registrationToken ? { authorization: `Bearer ${options.registrationToken}` } : {}),
      },
      body: JSON.stringify(registration),
    }),
  );
  if (!answer.success) throw new RegistrationFailed("the LMS's registration answer has no client_id");
  const product =
    configuration["https://purl.imsglobal.org/spec/lti-platform-configuration"].product_family_code;
  const issuerHost = new URL(configuration.issuer, options.configurationUrl).host;
  const deploymentId = answer.data["https://purl.imsglobal.org/spec/lti-tool-configuration"]?.deployment_id;
  return {
    id: platformIdFor(product, configuration.issuer, answer.data.client_id),
    name: `${product || "LMS"} at ${issuerHost}`,
    issuer: configuration.issuer,
    clientId: answer.data.client_id,
    authLoginUrl: configuration.authorization_endpoint.href,
    tokenUrl: configuration.token_endpoint.href,
    jwksUrl: configuration.jwks_uri.href,
    deploymentIds: deploymentId ? [deploymentId] : [],
    status: "pending",
    registeredAt: options.now,
  };
}

/**
 * The spec's check that a configuration comes from under its issuer, on parsed URLs: the same origin,
 * and the issuer's path a whole-segment prefix of the configuration's ("https://lms.example.edu" is
 * not the issuer of "https://lms.example.edu.evil.test/...").
 */
function isUnderIssuer(configurationUrl: URL, issuer: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(issuer);
  } catch {
    return false;
  }
  const base = parsed.pathname.endsWith("/") ? parsed.pathname : `${parsed.pathname}/`;
  return (
    parsed.origin === configurationUrl.origin &&
    (configurationUrl.pathname === parsed.pathname || configurationUrl.pathname.startsWith(base))
  );
}

/** A readable id that stays the same for the same issuer and client: "moodle-3f9a1c2b". */
function platformIdFor(product: string, issuer: string, clientId: string): string {
  const slug =
    product
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 30) || "lms";
  return `${slug}-${createHash("sha256").update(`${issuer}\n${clientId}`).digest("hex").slice(0, 8)}`;
}

export function registerDynamicRegistrationRoute(
  app: FastifyInstance,
  deps: {
    store: LtiLaunchStore;
    platforms: { reload(): Promise<void> };
    audit: AuditLog;
    publicUrl: URL;
    now: () => number;
  },
): void {
  const attempts = new RateLimiter({ burst: 5, refillMs: 60_000 });
  app.get<{ Querystring: { openid_configuration?: string; registration_token?: string } }>(
    "/api/lti/register",
    { config: { access: "public" } },
    async (request, reply) => {
      const fail = (text: string) =>
        sendRegisteredPage(
          reply.code(400),
          "Lab Console could not register",
          `${text} Nothing was registered.`,
        );
      if (!attempts.tryTake(addressKey(request.ip)))
        return fail("Too many registrations from here: wait a minute.");
      const configurationUrl = secureUrl().safeParse(request.query.openid_configuration ?? "");
      // Plain http to loopback is for a console on loopback (tests): a deployed one never reaches in.
      const reachable =
        configurationUrl.success && (!isLoopbackUrl(configurationUrl.data) || isLoopbackUrl(deps.publicUrl));
      if (!configurationUrl.success || !reachable) {
        return fail("The LMS sent no usable openid_configuration address (https only).");
      }
      let platform: StoredPlatform;
      try {
        platform = await registerAtPlatform({
          configurationUrl: configurationUrl.data,
          registrationToken: request.query.registration_token,
          publicUrl: deps.publicUrl,
          now: deps.now(),
        });
        await deps.store.addPlatform(platform);
      } catch (error) {
        // What those addresses answered stays in the log: the visitor need not be the LMS's administrator.
        request.log.warn({ err: error }, "LTI dynamic registration failed");
        return fail(
          "Lab Console could not register with this LMS: its configuration did not work, it could not be " +
            "reached, or it is registered already. The console's log says which.",
        );
      }
      await deps.platforms.reload();
      await deps.audit.record(
        {
          action: "lti-platform-register",
          actor: "system",
          details: { platform: platform.id, issuer: platform.issuer, clientId: platform.clientId },
        },
        request,
      );
      return sendRegisteredPage(
        reply,
        `Lab Console is registered with ${platform.name}`,
        "Launches from this LMS start working once an instructor approves it on Lab Console's page " +
          `Learning management systems (${new URL("/lti", deps.publicUrl).href}), signed in to Lab Console ` +
          "directly, not from a course.",
        "Done",
      );
    },
  );
}
