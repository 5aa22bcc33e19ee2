// Launches, as LTI 1.3 Core and the 1EdTech Security Framework lay them out: the platform's page starts
// the tool's third-party login, the tool sends the browser back to the authorization endpoint, and the
// platform form-posts a signed id_token to the tool's redirect URI.
import type { ServerResponse } from "node:http";
import { SignJWT } from "jose";
import type { PlatformContext } from "./platform-context.ts";
import { autoPostPage, escapeHtml, HttpFailure, page, sendHtml } from "./platform-http.ts";
import { newId, type LaunchTampering, type ToolRegistration } from "./platform-state.ts";

const lti = "https://purl.imsglobal.org/spec/lti/claim";
export const claims = {
  messageType: `${lti}/message_type`,
  version: `${lti}/version`,
  deploymentId: `${lti}/deployment_id`,
  targetLinkUri: `${lti}/target_link_uri`,
  resourceLink: `${lti}/resource_link`,
  roles: `${lti}/roles`,
  context: `${lti}/context`,
  toolPlatform: `${lti}/tool_platform`,
  launchPresentation: `${lti}/launch_presentation`,
  custom: `${lti}/custom`,
  lis: `${lti}/lis`,
  agsEndpoint: "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint",
  nrps: "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice",
  deepLinkingSettings: "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings",
  contentItems: "https://purl.imsglobal.org/spec/lti-dl/claim/content_items",
  deepLinkingData: "https://purl.imsglobal.org/spec/lti-dl/claim/data",
  deepLinkingMessage: "https://purl.imsglobal.org/spec/lti-dl/claim/msg",
  deepLinkingError: "https://purl.imsglobal.org/spec/lti-dl/claim/errormsg",
} as const;

export const agsScopes = {
  lineItem: "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
  lineItemReadOnly: "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
  resultReadOnly: "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
  score: "https://purl.imsglobal.org/spec/lti-ags/scope/score",
} as const;
export const nrpsScope = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly";

export type MessageType = "LtiResourceLinkRequest" | "LtiDeepLinkingRequest";

export interface LaunchOptions {
  sub: string;
  courseId: string;
  resourceLinkId: string;
  /** Show the tool inside an iframe on the platform's page rather than in the whole window. */
  frame?: boolean;
  tamper?: LaunchTampering;
}

export interface DeepLinkingLaunchOptions {
  sub: string;
  courseId: string;
  frame?: boolean;
  tamper?: LaunchTampering;
  /** The tool asked; the newest registration when not given. */
  clientId?: string;
}

/** One message the platform offered to send: lti_message_hint names it. */
interface PendingMessage {
  hint: string;
  type: MessageType;
  sub: string;
  courseId: string;
  resourceLinkId?: string;
  clientId: string;
  deploymentId: string;
  frame: boolean;
  tamper: LaunchTampering | null;
  expiresAt: number;
}

/** What a deep-linking request promised, found again by its `data`. */
export interface PendingDeepLink {
  data: string;
  sub: string;
  courseId: string;
  clientId: string;
  deploymentId: string;
  /** Opened in the course page's frame: the return hands its result to that page, as Moodle's does. */
  frame: boolean;
}

export interface IdTokenForm {
  action: string;
  id_token: string;
  state: string;
}

const messageLifetimeMs = 10 * 60_000;
const idTokenLifetimeSeconds = 5 * 60;

export class Launches {
  private readonly messages = new Map<string, PendingMessage>();
  readonly deepLinks = new Map<string, PendingDeepLink>();
  lastForm: IdTokenForm | null = null;

  constructor(private readonly platform: PlatformContext) {}

  /** The platform page that starts a resource-link launch as `sub`. */
  launchUrl(options: LaunchOptions): string {
    const link = this.platform.state.links.get(options.resourceLinkId);
    if (!link || link.courseId !== options.courseId)
      throw new Error(`no link ${options.resourceLinkId} in course ${options.courseId}`);
    return this.offer("LtiResourceLinkRequest", { ...options, clientId: link.clientId });
  }

  /** The platform page that starts a deep-linking launch as `sub`. */
  deepLinkingLaunchUrl(options: DeepLinkingLaunchOptions): string {
    return this.offer("LtiDeepLinkingRequest", options);
  }

  private offer(
    type: MessageType,
    options: {
      sub: string;
      courseId: string;
      resourceLinkId?: string;
      frame?: boolean;
      tamper?: LaunchTampering;
      clientId?: string;
    },
  ): string {
    const { state, quirks } = this.platform;
    state.user(options.sub);
    state.course(options.courseId);
    const tool = state.toolFor(options.clientId);
    const tamper = options.tamper ?? quirks.tamperLaunches;
    const message: PendingMessage = {
      hint: newId("message"),
      type,
      sub: options.sub,
      courseId: options.courseId,
      resourceLinkId: options.resourceLinkId,
      clientId: tool.clientId,
      deploymentId: tamper === "unknownDeployment" ? newId("unknown-deployment") : tool.deploymentId,
      frame: options.frame ?? false,
      tamper,
      expiresAt: Date.now() + messageLifetimeMs,
    };
    this.messages.set(message.hint, message);
    const path = `${this.platform.url}/launches/${encodeURIComponent(message.hint)}`;
    return message.frame ? `${path}/frame` : path;
  }

  private message(hint: string): PendingMessage {
    const message = this.messages.get(hint);
    if (!message || message.expiresAt < Date.now())
      throw new HttpFailure(404, "no such launch (or it expired)");
    return message;
  }

  private targetLinkUri(message: PendingMessage, tool: ToolRegistration): string {
    const toolDefault = tool.targetLinkUri ?? tool.redirectUris[0]!;
    if (message.type === "LtiDeepLinkingRequest") return tool.deepLinkingUrl ?? toolDefault;
    return this.platform.state.links.get(message.resourceLinkId!)?.url ?? toolDefault;
  }

  /** GET /launches/:hint: the page that posts the third-party login initiation to the tool. */
  loginInitiationPage(hint: string, response: ServerResponse): void {
    const message = this.message(hint);
    const tool = this.platform.state.toolFor(message.clientId);
    sendHtml(
      response,
      200,
      autoPostPage(`Opening ${tool.name ?? "the tool"}`, tool.loginUrl, {
        iss: this.platform.url,
        login_hint: message.sub,
        target_link_uri: this.targetLinkUri(message, tool),
        lti_message_hint: message.hint,
        client_id: tool.clientId,
        lti_deployment_id: message.deploymentId,
      }),
    );
  }

  /**
   * GET /launches/:hint/frame: the course's page with the launch inside an iframe. Like Moodle's
   * content-item dialog, it takes a deep-linking result from the frame's return page (a message from
   * this origin) and goes on to the course with it; a result posted anywhere else never reaches it.
   */
  framePage(hint: string, response: ServerResponse): void {
    const message = this.message(hint);
    const course = this.platform.state.course(message.courseId);
    const src = `/launches/${encodeURIComponent(hint)}`;
    sendHtml(
      response,
      200,
      page(
        course.title,
        `<iframe src="${escapeHtml(src)}" title="Tool" style="width:100%;height:80vh;border:1px solid #888"></iframe>
<form id="deep-link-result" method="post" action="/deep-links/accept" hidden><input name="handoff"></form>
<script>
addEventListener("message", (event) => {
  if (event.origin !== location.origin || event.data?.type !== "lti-deep-link-result") return;
  const form = document.getElementById("deep-link-result");
  form.elements.handoff.value = String(event.data.handoff);
  form.submit();
});
</script>`,
      ),
    );
  }

  /** GET|POST /auth: the OIDC authorization endpoint, answered with a form_post of the id_token. */
  async authorize(params: URLSearchParams, response: ServerResponse): Promise<void> {
    const required = (name: string): string => {
      const value = params.get(name);
      if (!value) throw new HttpFailure(400, `invalid_request: ${name} is missing`);
      return value;
    };
    const expect = (name: string, wanted: string) => {
      if (required(name) !== wanted) throw new HttpFailure(400, `invalid_request: ${name} must be ${wanted}`);
    };
    if (!required("scope").split(" ").includes("openid"))
      throw new HttpFailure(400, "invalid_scope: scope must include openid");
    expect("response_type", "id_token");
    expect("response_mode", "form_post");
    expect("prompt", "none");
    const clientId = required("client_id");
    const tool = this.platform.state.tool(clientId);
    if (!tool) throw new HttpFailure(400, "unauthorized_client: unknown client_id");
    const redirectUri = required("redirect_uri");
    if (!tool.redirectUris.includes(redirectUri))
      throw new HttpFailure(400, "invalid_request: redirect_uri is not registered for this client");
    const nonce = required("nonce");
    const message = this.messages.get(required("lti_message_hint"));
    if (!message || message.expiresAt < Date.now())
      throw new HttpFailure(400, "invalid_request: lti_message_hint is unknown or expired");
    if (message.clientId !== clientId)
      throw new HttpFailure(400, "invalid_request: lti_message_hint is for another client");
    // The browser is the user's: here the login_hint the platform issued stands for its session cookie.
    if (required("login_hint") !== message.sub)
      throw new HttpFailure(403, "login_required: login_hint does not match");

    const idToken = await this.idToken(message, tool, nonce);
    const form = { action: redirectUri, id_token: idToken, state: params.get("state") ?? "" };
    this.lastForm = form;
    sendHtml(
      response,
      200,
      autoPostPage("Launching", redirectUri, { id_token: form.id_token, state: form.state }),
    );
  }

  private async idToken(message: PendingMessage, tool: ToolRegistration, nonce: string): Promise<string> {
    const { state, url, keys } = this.platform;
    const user = state.user(message.sub);
    const course = state.course(message.courseId);
    const enrolment = state.enrolment(course.id, user.sub);
    const audience = message.tamper === "wrongAudience" ? `${tool.clientId}-someone-else` : tool.clientId;
    const now = Math.floor(Date.now() / 1000);
    const issuedAt = message.tamper === "expired" ? now - 2 * idTokenLifetimeSeconds : now;
    const sections = enrolment?.sections ?? [];
    const body: Record<string, unknown> = {
      nonce,
      azp: audience,
      name: user.name,
      email: user.email,
      ...(user.givenName ? { given_name: user.givenName } : {}),
      ...(user.familyName ? { family_name: user.familyName } : {}),
      [claims.messageType]: message.type,
      [claims.version]: "1.3.0",
      [claims.deploymentId]: message.deploymentId,
      [claims.targetLinkUri]: this.targetLinkUri(message, tool),
      [claims.roles]: [...new Set([...(enrolment?.roles ?? []), ...user.roles])],
      [claims.context]: {
        id: course.id,
        label: course.label,
        title: course.title,
        type: ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"],
      },
      [claims.toolPlatform]: {
        guid: url,
        name: this.platform.name,
        product_family_code: "lab-console-test-platform",
        version: "1",
      },
      [claims.launchPresentation]: {
        document_target: message.frame ? "iframe" : "window",
        return_url: `${url}/as/${encodeURIComponent(user.sub)}/courses/${encodeURIComponent(course.id)}`,
        locale: "en",
      },
      [claims.lis]: {
        person_sourcedid: user.sub,
        course_offering_sourcedid: course.id,
        // LIS gives one section id; a person in several sections gets them comma-separated.
        ...(sections.length > 0 ? { course_section_sourcedid: sections.join(",") } : {}),
      },
      [claims.nrps]: {
        context_memberships_url: `${url}/courses/${encodeURIComponent(course.id)}/memberships`,
        service_versions: ["2.0"],
      },
    };
    const lineItems = `${url}/courses/${encodeURIComponent(course.id)}/lineitems`;
    if (message.type === "LtiResourceLinkRequest") {
      const link = state.links.get(message.resourceLinkId!)!;
      body[claims.resourceLink] = { id: link.id, title: link.title };
      body[claims.custom] = link.custom;
      const lineItem = link.lineItemId ? state.lineItem(link.lineItemId) : undefined;
      body[claims.agsEndpoint] = {
        scope: Object.values(agsScopes),
        lineitems: lineItems,
        ...(lineItem ? { lineitem: lineItem.url } : {}),
      };
    } else {
      const data = newId("deep-link");
      this.deepLinks.set(data, {
        data,
        sub: user.sub,
        courseId: course.id,
        clientId: tool.clientId,
        deploymentId: message.deploymentId,
        frame: message.frame,
      });
      body[claims.agsEndpoint] = { scope: Object.values(agsScopes), lineitems: lineItems };
      body[claims.deepLinkingSettings] = {
        deep_link_return_url: `${url}/deep-links/return`,
        accept_types: ["ltiResourceLink"],
        accept_presentation_document_targets: ["iframe", "window"],
        accept_multiple: true,
        auto_create: true,
        title: course.title,
        data,
      };
    }
    const key = message.tamper === "forgedSignature" ? keys.forged : keys.current;
    return new SignJWT(body)
      .setProtectedHeader({ alg: "RS256", kid: key.kid, typ: "JWT" })
      .setIssuer(url)
      .setSubject(user.sub)
      .setAudience(audience)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + idTokenLifetimeSeconds)
      .sign(key.privateKey);
  }
}
