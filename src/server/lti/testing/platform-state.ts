// What the test platform knows: its people, courses, links, grade columns and registered tools, and
// what tools sent it, kept in memory for the life of one platform.
import { randomUUID } from "node:crypto";
import { HttpFailure } from "./platform-http.ts";

export const roles = {
  learner: "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner",
  instructor: "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor",
  teachingAssistant: "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant",
  administrator: "http://purl.imsglobal.org/vocab/lis/v2/membership#Administrator",
} as const;

export interface ToolRegistration {
  clientId: string;
  /** The tool's OIDC third-party login initiation URL. */
  loginUrl: string;
  /** Where an id_token may be posted (the launch URLs). */
  redirectUris: string[];
  /** The tool's JWKS: client assertions and deep-linking answers are checked against it. */
  jwksUrl: string;
  deploymentId: string;
  /** target_link_uri of a link that names none; the first redirect URI when not given. */
  targetLinkUri?: string;
  /** target_link_uri of a deep-linking launch; targetLinkUri when not given. */
  deepLinkingUrl?: string;
  /** The tool's name as dynamic registration gave it. */
  name?: string;
}

export interface PlatformUser {
  sub: string;
  name: string;
  email: string;
  /** Full role URIs that hold everywhere (institution roles); course roles come with enrol(). */
  roles: string[];
  givenName?: string;
  familyName?: string;
}

export interface Course {
  id: string;
  title: string;
  /** Short name; the id when not given. */
  label: string;
  /** An unpublished course refuses grades when the unpublishedCourseRefusal quirk is on (as Canvas does). */
  published: boolean;
}

export interface Enrolment {
  courseId: string;
  sub: string;
  roles: string[];
  /** Section (group) names. */
  sections: string[];
}

export interface ResourceLink {
  id: string;
  courseId: string;
  title: string;
  /** target_link_uri of its launches; the tool's when not given. */
  url?: string;
  custom: Record<string, string>;
  lineItemId?: string;
  /** The tool it launches; the most recently registered tool when not given. */
  clientId?: string;
}

export interface LineItem {
  /** The platform's own short id; `url` is the AGS id. */
  id: string;
  url: string;
  courseId: string;
  label: string;
  scoreMaximum: number;
  resourceId?: string;
  tag?: string;
  resourceLinkId?: string;
  startDateTime?: string;
  endDateTime?: string;
  gradesReleased?: boolean;
}

/** The last score a tool sent for one person in one line item. */
export interface StoredResult {
  lineItemId: string;
  userId: string;
  scoreGiven?: number;
  scoreMaximum?: number;
  comment?: string;
  timestamp: string;
  activityProgress: string;
  gradingProgress: string;
}

export interface ScorePost {
  lineItemId: string;
  body: unknown;
  /** The HTTP status answered; "held" while the holdScores quirk keeps it; "closed" when the client left first. */
  status: number | "held" | "closed";
  /** Why it was refused, or "ignored: older timestamp". */
  note?: string;
  receivedAt: string;
}

export interface TokenRequest {
  clientId?: string;
  requestedScopes: string[];
  grantedScopes: string[];
  status: number;
  error?: string;
}

export interface DeepLinkReturn {
  courseId: string;
  clientId: string;
  contentItems: unknown[];
  addedLinks: ResourceLink[];
}

export type LaunchTampering = "forgedSignature" | "wrongAudience" | "unknownDeployment" | "expired";

export interface PlatformQuirks {
  /** Scores for an unpublished course are answered 422 with a Canvas-like error body. */
  unpublishedCourseRefusal: boolean;
  /** Answer the next N score posts 503. */
  failScores: number;
  /** Record a score, then keep the request open until releaseHeldScores() (a platform that got it while the tool died). */
  holdScores: boolean;
  /** NRPS pages hold at most this many members even without `limit`. */
  nrpsPageSize: number | null;
  /** Every launch's id_token is tampered with this way. */
  tamperLaunches: LaunchTampering | null;
  /** The line item container lists each line item twice, as an LMS with a duplicated grade column does. */
  duplicateLineItemsVisible: boolean;
  /** Line items are named at this origin, not the platform's (an LMS behind a proxy that names itself on plain http). */
  lineItemsNamedAt: string | null;
}

export function defaultQuirks(): PlatformQuirks {
  return {
    unpublishedCourseRefusal: false,
    failScores: 0,
    holdScores: false,
    nrpsPageSize: null,
    tamperLaunches: null,
    duplicateLineItemsVisible: false,
    lineItemsNamedAt: null,
  };
}

export function newId(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

export class PlatformState {
  readonly users = new Map<string, PlatformUser>();
  readonly courses = new Map<string, Course>();
  readonly enrolments: Enrolment[] = [];
  readonly links = new Map<string, ResourceLink>();
  readonly lineItems = new Map<string, LineItem>();
  /** line item id -> user id -> result */
  readonly results = new Map<string, Map<string, StoredResult>>();
  readonly scorePosts: ScorePost[] = [];
  readonly tokenRequests: TokenRequest[] = [];
  readonly tools: ToolRegistration[] = [];
  readonly deepLinkReturns: DeepLinkReturn[] = [];
  private lineItemCount = 0;

  constructor(private readonly baseUrl: () => string) {}

  tool(clientId: string): ToolRegistration | undefined {
    return this.tools.find((tool) => tool.clientId === clientId);
  }

  /** The tool a link launches, or the newest registration. */
  toolFor(clientId: string | undefined): ToolRegistration {
    const tool = clientId ? this.tool(clientId) : this.tools.at(-1);
    if (!tool) throw new HttpFailure(404, clientId ? `no tool ${clientId}` : "no tool is registered");
    return tool;
  }

  registerTool(registration: ToolRegistration): void {
    const known = this.tools.findIndex((tool) => tool.clientId === registration.clientId);
    if (known >= 0) this.tools.splice(known, 1);
    this.tools.push({ ...registration, redirectUris: [...registration.redirectUris] });
  }

  course(courseId: string): Course {
    const course = this.courses.get(courseId);
    if (!course) throw new HttpFailure(404, `no course ${courseId}`);
    return course;
  }

  user(sub: string): PlatformUser {
    const user = this.users.get(sub);
    if (!user) throw new HttpFailure(404, `no user ${sub}`);
    return user;
  }

  enrolment(courseId: string, sub: string): Enrolment | undefined {
    return this.enrolments.find((entry) => entry.courseId === courseId && entry.sub === sub);
  }

  enrol(courseId: string, sub: string, roleUris: string[], sections: string[] = []): void {
    this.course(courseId);
    this.user(sub);
    const known = this.enrolment(courseId, sub);
    if (known) {
      known.roles = [...roleUris];
      known.sections = [...sections];
    } else this.enrolments.push({ courseId, sub, roles: [...roleUris], sections: [...sections] });
  }

  addLink(link: ResourceLink): ResourceLink {
    this.course(link.courseId);
    this.links.set(link.id, link);
    return link;
  }

  courseLinks(courseId: string): ResourceLink[] {
    return [...this.links.values()].filter((link) => link.courseId === courseId);
  }

  addLineItem(fields: Omit<LineItem, "id" | "url">): LineItem {
    this.lineItemCount += 1;
    const id = String(this.lineItemCount);
    const item: LineItem = {
      ...fields,
      id,
      url: `${this.baseUrl()}/courses/${fields.courseId}/lineitems/${id}`,
    };
    this.lineItems.set(id, item);
    return item;
  }

  /** As an instructor deleting the column: its results go, and no link names it any more. */
  deleteLineItem(id: string): void {
    this.lineItems.delete(id);
    this.results.delete(id);
    for (const link of this.links.values()) if (link.lineItemId === id) delete link.lineItemId;
  }

  courseLineItems(courseId: string): LineItem[] {
    return [...this.lineItems.values()].filter((item) => item.courseId === courseId);
  }

  /** A line item by its short id or its URL. */
  lineItem(idOrUrl: string): LineItem | undefined {
    return this.lineItems.get(idOrUrl.split("/").at(-1) ?? idOrUrl);
  }

  resultsOf(lineItemId: string): StoredResult[] {
    return [...(this.results.get(lineItemId)?.values() ?? [])];
  }
}
