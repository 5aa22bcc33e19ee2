// A paged LMS list (AGS line items, NRPS members): each page fetched with a service token, the next
// taken from its Link rel="next" (on the same origin only, lms-http.ts), and the pages capped, so a
// platform that pages forever gets an error, never the BFF's time.
import type { Platform } from "../model/model.ts";
import { LmsError, lmsRequest, nextPageUrl } from "./lms-http.ts";
import type { ServiceTokens } from "./service-token.ts";

export interface LmsPagesRequest {
  tokens: ServiceTokens;
  platform: Platform;
  scope: string;
  first: URL;
  /** The list's media type. */
  accept: string;
  maxPages: number;
  /** A page larger than this fails the list. */
  pageBytes: number;
  /** What the list holds, in errors: "line items", "members". */
  items: string;
  /** What a request is for, in errors: "the list of line items". */
  what: string;
  signal?: AbortSignal;
}

/** Each page's body with its URL, in order. */
export async function* lmsPages(request: LmsPagesRequest): AsyncGenerator<{ url: URL; text: string }> {
  let page: URL | undefined = request.first;
  for (let pages = 0; page; pages++) {
    if (pages === request.maxPages) {
      throw new LmsError(
        undefined,
        `${request.first.host} gave more than ${request.maxPages} pages of ${request.items}.`,
      );
    }
    const url: URL = page;
    const response = await request.tokens.authorized(
      request.platform,
      [request.scope],
      request.signal,
      (token) =>
        lmsRequest({
          method: "GET",
          url,
          headers: { authorization: `Bearer ${token}`, accept: request.accept },
          signal: request.signal,
          maxBytes: request.pageBytes,
          what: request.what,
        }),
    );
    yield { url, text: response.text };
    page = nextPageUrl(response.headers.get("link"), url);
  }
}
