// A test LMS that follows the 1EdTech specifications (LTI 1.3 Core, Deep Linking 2.0, AGS 2.0, NRPS 2.0,
// Dynamic Registration 1.0, the Security Framework), written from the specs rather than from our tool,
// with the quirks of real LMSs as switches. Vitest and Playwright start it on 127.0.0.1.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Ags } from "./platform-ags.ts";
import { createPlatformKeys, toolKeySets, type PlatformContext } from "./platform-context.ts";
import { DeepLinkReturns } from "./platform-deep-links.ts";
import { HttpFailure, readForm, sendHtml, sendJson, sendText } from "./platform-http.ts";
import {
  Launches,
  type DeepLinkingLaunchOptions,
  type IdTokenForm,
  type LaunchOptions,
} from "./platform-launch.ts";
import { Nrps } from "./platform-nrps.ts";
import { coursePage, coursePagePath, gradebookPage } from "./platform-pages.ts";
import { openIdConfiguration, Registrations } from "./platform-registration.ts";
import {
  defaultQuirks,
  newId,
  PlatformState,
  type Course,
  type DeepLinkReturn,
  type LineItem,
  type PlatformQuirks,
  type PlatformUser,
  type ResourceLink,
  type ScorePost,
  type StoredResult,
  type TokenRequest,
  type ToolRegistration,
} from "./platform-state.ts";
import { TokenEndpoint } from "./platform-token.ts";

export type { ToolRegistration, PlatformQuirks, LaunchOptions, DeepLinkingLaunchOptions, IdTokenForm };
export { roles } from "./platform-state.ts";

export interface TestPlatformOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  name?: string;
  tool?: ToolRegistration;
}

export interface TestPlatform {
  /** The base URL, which is also the issuer. */
  readonly url: string;
  readonly issuer: string;
  readonly jwksUrl: string;
  readonly authUrl: string;
  readonly tokenUrl: string;
  readonly openIdConfigurationUrl: string;
  /** Switch these at any time; they apply to the next request. */
  readonly quirks: PlatformQuirks;

  registerTool(registration: ToolRegistration): void;
  addUser(user: Omit<PlatformUser, "roles"> & { roles?: string[] }): PlatformUser;
  addCourse(course: { id: string; title: string; label?: string; published?: boolean }): Course;
  enrol(courseId: string, sub: string, roles: string[], sections?: string[]): void;
  addResourceLink(
    courseId: string,
    link: Omit<ResourceLink, "id" | "courseId" | "custom"> & { id?: string; custom?: Record<string, string> },
  ): ResourceLink;
  addLineItem(courseId: string, fields: Omit<LineItem, "id" | "url" | "courseId">): LineItem;
  setPublished(courseId: string, published: boolean): void;
  /** As an instructor deleting the column in the gradebook. */
  deleteLineItem(lineItemId: string): void;

  /** A platform page that launches `resourceLinkId` as `sub` (posting the login initiation itself). */
  launchUrl(options: LaunchOptions): string;
  /** A platform page that starts a deep-linking launch as `sub`. */
  deepLinkingLaunchUrl(options: DeepLinkingLaunchOptions): string;
  coursePageUrl(sub: string, courseId: string): string;
  gradebookUrl(courseId: string): string;
  /** The tool's registration initiation URL with openid_configuration and a one-use registration_token. */
  registrationStartUrl(toolInitiationUrl: string): string;
  /** The last id_token form the platform auto-posted, for a test to replay. */
  lastIdTokenForm(): IdTokenForm | null;
  /** Answers the score posts the holdScores quirk is keeping. */
  releaseHeldScores(): void;

  lineItems(courseId: string): LineItem[];
  /** By the line item's short id or its URL. */
  results(lineItemId: string): StoredResult[];
  scorePosts(): ScorePost[];
  resourceLinks(courseId: string): ResourceLink[];
  tokenRequests(): TokenRequest[];
  registeredTools(): ToolRegistration[];
  deepLinkReturns(): DeepLinkReturn[];
  close(): Promise<void>;
}

const segment = "([^/]+)";
const route = (pattern: string) => new RegExp(`^${pattern}$`);
const routes = {
  lineItems: route(`/courses/${segment}/lineitems`),
  lineItem: route(`/courses/${segment}/lineitems/${segment}`),
  scores: route(`/courses/${segment}/lineitems/${segment}/scores`),
  results: route(`/courses/${segment}/lineitems/${segment}/results`),
  memberships: route(`/courses/${segment}/memberships`),
  gradebook: route(`/courses/${segment}/gradebook`),
  coursePage: route(`/as/${segment}/courses/${segment}`),
  linkLaunch: route(`/as/${segment}/courses/${segment}/links/${segment}/launch`),
  deepLinking: route(`/as/${segment}/courses/${segment}/deep-linking`),
  launch: route(`/launches/${segment}`),
  launchFrame: route(`/launches/${segment}/frame`),
};

function redirect(response: ServerResponse, location: string): void {
  response.writeHead(303, { location }).end();
}

export async function startTestPlatform(options: TestPlatformOptions = {}): Promise<TestPlatform> {
  let baseUrl = "";
  const state = new PlatformState(() => baseUrl);
  const context: PlatformContext = {
    get url() {
      return baseUrl;
    },
    state,
    quirks: defaultQuirks(),
    keys: await createPlatformKeys(),
    name: options.name ?? "Test LMS",
    toolKeys: toolKeySets(),
  };
  const launches = new Launches(context);
  const tokens = new TokenEndpoint(context);
  const ags = new Ags(context, tokens);
  const nrps = new Nrps(context, tokens);
  const deepLinks = new DeepLinkReturns(context, launches);
  const registrations = new Registrations(context);
  if (options.tool) state.registerTool(options.tool);

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", baseUrl);
    const path = url.pathname;
    const method = request.method ?? "GET";
    const match = (pattern: RegExp) => pattern.exec(path)?.slice(1).map(decodeURIComponent);
    let parts: string[] | undefined;

    if (path === "/jwks") return sendJson(response, 200, { keys: [context.keys.current.publicJwk] });
    if (path === "/.well-known/openid-configuration")
      return sendJson(response, 200, openIdConfiguration(context));
    if (path === "/auth") {
      const params = method === "POST" ? await readForm(request) : url.searchParams;
      return launches.authorize(params, response);
    }
    if (path === "/token" && method === "POST") return tokens.handle(request, response);
    if (path === "/register") return registrations.handle(request, response);
    if (path === "/deep-links/return" && method === "POST") return deepLinks.handle(request, response);
    if (path === "/deep-links/accept" && method === "POST") return deepLinks.accept(request, response);
    if ((parts = match(routes.launch))) return launches.loginInitiationPage(parts[0]!, response);
    if ((parts = match(routes.launchFrame))) return launches.framePage(parts[0]!, response);
    if ((parts = match(routes.lineItems))) return ags.lineItems(parts[0]!, request, response, url);
    if ((parts = match(routes.lineItem))) return ags.lineItem(parts[0]!, parts[1]!, request, response);
    if ((parts = match(routes.scores))) return ags.score(parts[0]!, parts[1]!, request, response);
    if ((parts = match(routes.results))) return ags.results(parts[0]!, parts[1]!, request, response, url);
    if ((parts = match(routes.memberships))) return nrps.memberships(parts[0]!, request, response, url);
    if ((parts = match(routes.gradebook))) return sendHtml(response, 200, gradebookPage(context, parts[0]!));
    if ((parts = match(routes.coursePage)))
      return sendHtml(response, 200, coursePage(context, parts[0]!, parts[1]!));
    if ((parts = match(routes.linkLaunch))) {
      const [sub, courseId, resourceLinkId] = parts as [string, string, string];
      return redirect(
        response,
        launches.launchUrl({ sub, courseId, resourceLinkId, frame: url.searchParams.get("frame") === "1" }),
      );
    }
    if ((parts = match(routes.deepLinking))) {
      const [sub, courseId] = parts as [string, string];
      return redirect(
        response,
        launches.deepLinkingLaunchUrl({ sub, courseId, frame: url.searchParams.get("frame") === "1" }),
      );
    }
    throw new HttpFailure(404, `nothing at ${method} ${path}`);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) return void response.destroy();
      if (error instanceof HttpFailure) {
        for (const [name, value] of Object.entries(error.headers)) response.setHeader(name, value);
        return sendText(response, error.status, error.message);
      }
      sendText(response, 500, `test platform failed: ${(error as Error).message}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: baseUrl,
    issuer: baseUrl,
    jwksUrl: `${baseUrl}/jwks`,
    authUrl: `${baseUrl}/auth`,
    tokenUrl: tokens.url,
    openIdConfigurationUrl: `${baseUrl}/.well-known/openid-configuration`,
    quirks: context.quirks,

    registerTool: (registration) => state.registerTool(registration),
    addUser(user) {
      const added = { ...user, roles: [...(user.roles ?? [])] };
      state.users.set(added.sub, added);
      return added;
    },
    addCourse(course) {
      const added = {
        id: course.id,
        title: course.title,
        label: course.label ?? course.id,
        published: course.published ?? true,
      };
      state.courses.set(added.id, added);
      return added;
    },
    enrol: (courseId, sub, roleUris, sections) => state.enrol(courseId, sub, roleUris, sections),
    addResourceLink: (courseId, link) =>
      state.addLink({ ...link, id: link.id ?? newId("link"), courseId, custom: { ...link.custom } }),
    addLineItem: (courseId, fields) => {
      state.course(courseId);
      return state.addLineItem({ ...fields, courseId });
    },
    setPublished(courseId, published) {
      state.course(courseId).published = published;
    },
    deleteLineItem(lineItemId) {
      const item = state.lineItem(lineItemId);
      if (item) state.deleteLineItem(item.id);
    },

    launchUrl: (launch) => launches.launchUrl(launch),
    deepLinkingLaunchUrl: (launch) => launches.deepLinkingLaunchUrl(launch),
    coursePageUrl: (sub, courseId) => `${baseUrl}${coursePagePath(sub, courseId)}`,
    gradebookUrl: (courseId) => `${baseUrl}/courses/${encodeURIComponent(courseId)}/gradebook`,
    registrationStartUrl: (toolInitiationUrl) => registrations.startUrl(toolInitiationUrl),
    lastIdTokenForm: () => launches.lastForm,
    releaseHeldScores: () => ags.releaseHeldScores(),

    lineItems: (courseId) => state.courseLineItems(courseId),
    results(lineItemId) {
      const item = state.lineItem(lineItemId);
      return item ? state.resultsOf(item.id) : [];
    },
    scorePosts: () => [...state.scorePosts],
    resourceLinks: (courseId) => state.courseLinks(courseId),
    tokenRequests: () => [...state.tokenRequests],
    registeredTools: () => [...state.tools],
    deepLinkReturns: () => [...state.deepLinkReturns],
    async close() {
      ags.releaseHeldScores();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
