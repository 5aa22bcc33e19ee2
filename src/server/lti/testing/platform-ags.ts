// Assignment and Grade Services 2.0: line items, scores and results, with the media types the spec
// names, and the quirks of real platforms (an unpublished course, a 5xx, an answer that never comes).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { PlatformContext } from "./platform-context.ts";
import { HttpFailure, readJson, requireAccept, sendJson, sendText } from "./platform-http.ts";
import { agsScopes } from "./platform-launch.ts";
import type { LineItem, ScorePost, StoredResult } from "./platform-state.ts";
import type { TokenEndpoint } from "./platform-token.ts";

export const agsMediaTypes = {
  lineItemContainer: "application/vnd.ims.lis.v2.lineitemcontainer+json",
  lineItem: "application/vnd.ims.lis.v2.lineitem+json",
  score: "application/vnd.ims.lis.v1.score+json",
  resultContainer: "application/vnd.ims.lis.v2.resultcontainer+json",
} as const;

const activityProgress = ["Initialized", "Started", "InProgress", "Submitted", "Completed"];
const gradingProgress = ["FullyGraded", "Pending", "PendingManual", "Failed", "NotReady"];

/** Canvas's shape for a refused AGS request. */
export function canvasError(message: string): unknown {
  return { errors: { type: "unprocessable_entity", message } };
}

/** `items` cut to the page `url` asks for (limit, page), and the Link header to the next page. */
export function paged<T>(
  items: T[],
  url: URL,
  pageSize: number | null,
): { items: T[]; headers: Record<string, string> } {
  if (!pageSize) return { items, headers: {} };
  const pageNumber = Math.max(1, Number(url.searchParams.get("page") ?? "1") || 1);
  const start = (pageNumber - 1) * pageSize;
  if (start + pageSize >= items.length) return { items: items.slice(start), headers: {} };
  const next = new URL(url);
  next.searchParams.set("page", String(pageNumber + 1));
  return { items: items.slice(start, start + pageSize), headers: { link: `<${next.href}>; rel="next"` } };
}

export function positiveLimit(url: URL): number | null {
  const limit = Number(url.searchParams.get("limit"));
  return Number.isInteger(limit) && limit > 0 ? limit : null;
}

function lineItemView(item: LineItem, namedAt: string | null): Record<string, unknown> {
  const { id: _id, url, courseId: _courseId, ...fields } = item;
  return { id: namedAt === null ? url : new URL(new URL(url).pathname, namedAt).href, ...fields };
}

type LineItemFields = Omit<LineItem, "id" | "url" | "courseId">;

function optionalString(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new HttpFailure(400, `${name} must be a string`);
  return value;
}

function optionalDate(body: Record<string, unknown>, name: string): string | undefined {
  const value = optionalString(body, name);
  if (value !== undefined && Number.isNaN(Date.parse(value)))
    throw new HttpFailure(400, `${name} is not an ISO 8601 date`);
  return value;
}

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new HttpFailure(400, "body must be an object");
  return body as Record<string, unknown>;
}

export class Ags {
  private readonly held: Array<() => void> = [];

  constructor(
    private readonly platform: PlatformContext,
    private readonly tokens: TokenEndpoint,
  ) {}

  private lineItemFields(courseId: string, raw: unknown): LineItemFields {
    const body = asObject(raw);
    const label = body.label;
    if (typeof label !== "string" || label.trim() === "") throw new HttpFailure(400, "label is required");
    const scoreMaximum = body.scoreMaximum;
    if (typeof scoreMaximum !== "number" || !(scoreMaximum > 0))
      throw new HttpFailure(400, "scoreMaximum must be a number above 0");
    const resourceLinkId = optionalString(body, "resourceLinkId");
    if (resourceLinkId !== undefined && this.platform.state.links.get(resourceLinkId)?.courseId !== courseId)
      throw new HttpFailure(400, "resourceLinkId names no link of this course");
    const gradesReleased = body.gradesReleased;
    if (gradesReleased !== undefined && typeof gradesReleased !== "boolean")
      throw new HttpFailure(400, "gradesReleased must be a boolean");
    const fields: LineItemFields = {
      label,
      scoreMaximum,
      resourceId: optionalString(body, "resourceId"),
      tag: optionalString(body, "tag"),
      resourceLinkId,
      startDateTime: optionalDate(body, "startDateTime"),
      endDateTime: optionalDate(body, "endDateTime"),
      gradesReleased,
    };
    return Object.fromEntries(
      Object.entries(fields).filter(([, value]) => value !== undefined),
    ) as LineItemFields;
  }

  private courseLineItem(courseId: string, lineItemId: string): LineItem {
    const item = this.platform.state.lineItems.get(lineItemId);
    if (!item || item.courseId !== courseId) throw new HttpFailure(404, "no such line item");
    return item;
  }

  /** /courses/:id/lineitems */
  async lineItems(
    courseId: string,
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
  ): Promise<void> {
    const { state, quirks } = this.platform;
    if (!state.courses.has(courseId)) throw new HttpFailure(404, "no such course");
    if (request.method === "GET") {
      this.tokens.authorize(request, [agsScopes.lineItem, agsScopes.lineItemReadOnly]);
      requireAccept(request, agsMediaTypes.lineItemContainer);
      const filters: Array<[string, keyof LineItem]> = [
        ["resource_link_id", "resourceLinkId"],
        ["resource_id", "resourceId"],
        ["tag", "tag"],
      ];
      const matching = state
        .courseLineItems(courseId)
        .filter((item) =>
          filters.every(
            ([param, field]) => !url.searchParams.has(param) || item[field] === url.searchParams.get(param),
          ),
        )
        .flatMap((item) => (quirks.duplicateLineItemsVisible ? [item, item] : [item]));
      const { items, headers } = paged(matching, url, positiveLimit(url));
      sendJson(
        response,
        200,
        items.map((item) => lineItemView(item, quirks.lineItemsNamedAt)),
        agsMediaTypes.lineItemContainer,
        headers,
      );
      return;
    }
    if (request.method === "POST") {
      this.tokens.authorize(request, [agsScopes.lineItem]);
      const fields = this.lineItemFields(courseId, await readJson(request, agsMediaTypes.lineItem));
      const item = state.addLineItem({ ...fields, courseId });
      sendJson(response, 201, lineItemView(item, quirks.lineItemsNamedAt), agsMediaTypes.lineItem, {
        location: item.url,
      });
      return;
    }
    throw new HttpFailure(405, "GET or POST");
  }

  /** /courses/:id/lineitems/:lineItemId */
  async lineItem(
    courseId: string,
    lineItemId: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const { state } = this.platform;
    const item = this.courseLineItem(courseId, lineItemId);
    if (request.method === "GET") {
      this.tokens.authorize(request, [agsScopes.lineItem, agsScopes.lineItemReadOnly]);
      requireAccept(request, agsMediaTypes.lineItem);
      sendJson(
        response,
        200,
        lineItemView(item, this.platform.quirks.lineItemsNamedAt),
        agsMediaTypes.lineItem,
      );
      return;
    }
    if (request.method === "PUT") {
      this.tokens.authorize(request, [agsScopes.lineItem]);
      const body = await readJson(request, agsMediaTypes.lineItem);
      const claimedId = asObject(body).id;
      if (claimedId !== undefined && claimedId !== item.url)
        throw new HttpFailure(400, "id differs from the line item's URL");
      const fields = this.lineItemFields(courseId, body);
      const updated: LineItem = { id: item.id, url: item.url, courseId, ...fields };
      // The link a line item belongs to stays when an update leaves it out.
      if (!fields.resourceLinkId && item.resourceLinkId) updated.resourceLinkId = item.resourceLinkId;
      state.lineItems.set(item.id, updated);
      sendJson(
        response,
        200,
        lineItemView(updated, this.platform.quirks.lineItemsNamedAt),
        agsMediaTypes.lineItem,
      );
      return;
    }
    if (request.method === "DELETE") {
      this.tokens.authorize(request, [agsScopes.lineItem]);
      state.deleteLineItem(item.id);
      response.writeHead(204).end();
      return;
    }
    throw new HttpFailure(405, "GET, PUT or DELETE");
  }

  /** POST /courses/:id/lineitems/:lineItemId/scores: every post is recorded with what it was answered. */
  async score(
    courseId: string,
    lineItemId: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const post: ScorePost = { lineItemId, body: undefined, status: 0, receivedAt: new Date().toISOString() };
    this.platform.state.scorePosts.push(post);
    try {
      if (request.method !== "POST") throw new HttpFailure(405, "POST");
      await this.acceptScore(courseId, lineItemId, request, response, post);
    } catch (error) {
      post.status = error instanceof HttpFailure ? error.status : 500;
      post.note = (error as Error).message;
      throw error;
    }
  }

  private async acceptScore(
    courseId: string,
    lineItemId: string,
    request: IncomingMessage,
    response: ServerResponse,
    post: ScorePost,
  ): Promise<void> {
    const { state, quirks } = this.platform;
    this.tokens.authorize(request, [agsScopes.score]);
    const item = this.courseLineItem(courseId, lineItemId);
    const body = asObject(await readJson(request, agsMediaTypes.score));
    post.body = body;
    if (quirks.failScores > 0) {
      quirks.failScores -= 1;
      post.status = 503;
      post.note = "failScores quirk";
      sendText(response, 503, "Service Unavailable: the gradebook is being upgraded, try again later");
      return;
    }
    const result = this.validScore(item, body);
    if (!state.enrolment(courseId, result.userId)) {
      post.status = 422;
      post.note = "user not enrolled";
      sendJson(response, 422, canvasError("User not found in course or is not a student"));
      return;
    }
    if (quirks.unpublishedCourseRefusal && !state.course(courseId).published) {
      post.status = 422;
      post.note = "course not published";
      sendJson(response, 422, canvasError("Course not available for grading: the course is not published"));
      return;
    }
    const results = state.results.get(item.id) ?? new Map<string, StoredResult>();
    state.results.set(item.id, results);
    const previous = results.get(result.userId);
    // AGS: a score older than the one on record changes nothing (it is still acknowledged).
    if (previous && Date.parse(previous.timestamp) > Date.parse(result.timestamp))
      post.note = "ignored: older timestamp";
    else results.set(result.userId, result);

    if (quirks.holdScores) {
      post.status = "held";
      await new Promise<void>((release) => {
        this.held.push(release);
        response.once("close", release);
      });
      if (response.destroyed || request.socket.destroyed) {
        post.status = "closed";
        return;
      }
    }
    post.status = 204;
    response.writeHead(204).end();
  }

  private validScore(item: LineItem, body: Record<string, unknown>): StoredResult {
    const userId = body.userId;
    if (typeof userId !== "string" || userId === "") throw new HttpFailure(400, "userId is required");
    const timestamp = body.timestamp;
    if (typeof timestamp !== "string" || Number.isNaN(Date.parse(timestamp)))
      throw new HttpFailure(400, "timestamp must be an ISO 8601 date-time");
    if (typeof body.activityProgress !== "string" || !activityProgress.includes(body.activityProgress))
      throw new HttpFailure(400, `activityProgress must be one of ${activityProgress.join(", ")}`);
    if (typeof body.gradingProgress !== "string" || !gradingProgress.includes(body.gradingProgress))
      throw new HttpFailure(400, `gradingProgress must be one of ${gradingProgress.join(", ")}`);
    const { scoreGiven, scoreMaximum, comment } = body;
    if (scoreGiven !== undefined && (typeof scoreGiven !== "number" || !(scoreGiven >= 0)))
      throw new HttpFailure(400, "scoreGiven must be a number of at least 0");
    if (scoreMaximum !== undefined && (typeof scoreMaximum !== "number" || !(scoreMaximum > 0)))
      throw new HttpFailure(400, "scoreMaximum must be a number above 0");
    if (scoreGiven !== undefined && scoreMaximum === undefined)
      throw new HttpFailure(400, "scoreMaximum is required with scoreGiven");
    if (comment !== undefined && typeof comment !== "string")
      throw new HttpFailure(400, "comment must be a string");
    return {
      lineItemId: item.id,
      userId,
      timestamp,
      activityProgress: body.activityProgress,
      gradingProgress: body.gradingProgress,
      ...(scoreGiven !== undefined
        ? { scoreGiven: scoreGiven as number, scoreMaximum: scoreMaximum as number }
        : {}),
      ...(comment !== undefined ? { comment } : {}),
    };
  }

  /** Answers every score the holdScores quirk kept waiting. */
  releaseHeldScores(): void {
    for (const release of this.held.splice(0)) release();
  }

  /** GET /courses/:id/lineitems/:lineItemId/results */
  results(
    courseId: string,
    lineItemId: string,
    request: IncomingMessage,
    response: ServerResponse,
    url: URL,
  ): void {
    if (request.method !== "GET") throw new HttpFailure(405, "GET");
    this.tokens.authorize(request, [agsScopes.resultReadOnly]);
    requireAccept(request, agsMediaTypes.resultContainer);
    const item = this.courseLineItem(courseId, lineItemId);
    const userId = url.searchParams.get("user_id");
    const all = this.platform.state
      .resultsOf(item.id)
      .filter((result) => userId === null || result.userId === userId)
      .map((result) => resultView(item, result));
    const { items, headers } = paged(all, url, positiveLimit(url));
    sendJson(response, 200, items, agsMediaTypes.resultContainer, headers);
  }
}

/** A result as AGS shows it: the score scaled to the line item's maximum. */
export function resultView(item: LineItem, result: StoredResult): Record<string, unknown> {
  const scored = result.scoreGiven !== undefined && result.scoreMaximum !== undefined;
  return {
    id: `${item.url}/results/${encodeURIComponent(result.userId)}`,
    scoreOf: item.url,
    userId: result.userId,
    ...(scored
      ? {
          resultScore: (result.scoreGiven! * item.scoreMaximum) / result.scoreMaximum!,
          resultMaximum: item.scoreMaximum,
        }
      : {}),
    ...(result.comment !== undefined ? { comment: result.comment } : {}),
    timestamp: result.timestamp,
  };
}
