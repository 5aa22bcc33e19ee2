// Assignment and Grade Services 2.0, the part this console uses: find a course's line items by
// resource, create one, and post a score to one. Media types as the specification names them; every
// call with a service token (service-token.ts) and every answer read with a cap (lms-http.ts).
import * as z from "zod/mini";
import type { Platform } from "../model/model.ts";
import { LmsError, lmsRequest, parseLmsJson } from "./lms-http.ts";
import { lmsPages } from "./lms-pages.ts";
import { scopes, type ServiceTokens } from "./service-token.ts";

const mediaTypes = {
  lineItemContainer: "application/vnd.ims.lis.v2.lineitemcontainer+json",
  lineItem: "application/vnd.ims.lis.v2.lineitem+json",
  score: "application/vnd.ims.lis.v1.score+json",
} as const;

/** A course has a line item per graded activity: a few hundred at most, in pages of some tens. */
const limits = { pages: 20, items: 2000, pageBytes: 2 * 1024 * 1024, itemBytes: 64 * 1024 };

const LineItemAnswer = z.object({
  id: z.string().check(z.url()),
  label: z.optional(z.string()),
  scoreMaximum: z.optional(z.number()),
  resourceId: z.optional(z.string()),
  resourceLinkId: z.optional(z.string()),
  tag: z.optional(z.string()),
});
export type LineItem = z.output<typeof LineItemAnswer>;

export interface NewLineItem {
  label: string;
  scoreMaximum: number;
  resourceId: string;
  tag: string;
}

/** The AGS Score: a finished, fully graded result at the time it was graded. */
export interface AgsScore {
  userId: string;
  scoreGiven: number;
  scoreMaximum: number;
  timestamp: string;
}

export class AgsClient {
  constructor(private readonly tokens: ServiceTokens) {}

  /** The course's line items for `resourceId` (and `resourceLinkId`, when given), every page of them. */
  async findLineItems(
    platform: Platform,
    lineItemsUrl: URL,
    filter: { resourceId: string; resourceLinkId?: string },
    signal?: AbortSignal,
  ): Promise<LineItem[]> {
    const pages = lmsPages({
      tokens: this.tokens,
      platform,
      scope: scopes.lineItem,
      first: withQuery(lineItemsUrl, {
        resource_id: filter.resourceId,
        ...(filter.resourceLinkId === undefined ? {} : { resource_link_id: filter.resourceLinkId }),
      }),
      accept: mediaTypes.lineItemContainer,
      maxPages: limits.pages,
      pageBytes: limits.pageBytes,
      items: "line items",
      what: "the list of line items",
      signal,
    });
    const found: LineItem[] = [];
    for await (const { url, text } of pages) {
      const items = parseLmsJson(text, z.array(z.unknown()), url, "a list of line items");
      for (const item of items) {
        const parsed = z.safeParse(LineItemAnswer, item);
        // Another tool's oddly shaped item is not this console's concern; only a matching one is.
        if (parsed.success && parsed.data.resourceId === filter.resourceId) found.push(parsed.data);
      }
      if (found.length > limits.items) {
        throw new LmsError(undefined, `${lineItemsUrl.host} gave more than ${limits.items} line items.`);
      }
    }
    return found;
  }

  async createLineItem(
    platform: Platform,
    lineItemsUrl: URL,
    item: NewLineItem,
    signal?: AbortSignal,
  ): Promise<LineItem> {
    const response = await this.tokens.authorized(platform, [scopes.lineItem], signal, (token) =>
      lmsRequest({
        method: "POST",
        url: lineItemsUrl,
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": mediaTypes.lineItem,
          accept: mediaTypes.lineItem,
        },
        body: JSON.stringify(item),
        signal,
        maxBytes: limits.itemBytes,
        what: `a line item for ${item.resourceId}`,
      }),
    );
    return parseLmsJson(response.text, LineItemAnswer, lineItemsUrl, "a line item");
  }

  async postScore(
    platform: Platform,
    lineItemUrl: URL,
    score: AgsScore,
    signal?: AbortSignal,
  ): Promise<void> {
    await this.tokens.authorized(platform, [scopes.score], signal, (token) =>
      lmsRequest({
        method: "POST",
        url: scoresUrl(lineItemUrl),
        headers: { authorization: `Bearer ${token}`, "content-type": mediaTypes.score },
        body: JSON.stringify({
          ...score,
          activityProgress: "Completed",
          gradingProgress: "FullyGraded",
        }),
        signal,
        // Whatever a platform answers to a score, the console only needs its status.
        maxBytes: 64 * 1024,
        what: "a score",
      }),
    );
  }
}

/** The line item's scores endpoint: `/scores` after its path, before any query (AGS 2.0, 3.4). */
export function scoresUrl(lineItemUrl: URL): URL {
  const url = new URL(lineItemUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/scores`;
  return url;
}

function withQuery(base: URL, params: Record<string, string>): URL {
  const url = new URL(base);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url;
}
