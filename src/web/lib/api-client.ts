import type * as z from "zod/mini";
import { ApiErrorBody, csrfHeader } from "../../common/api.ts";
import { ApiError } from "./api-error.ts";

type Method = "GET" | "POST" | "DELETE";

interface RequestOptions<T> {
  method?: Method;
  body?: unknown;
  /** Parses the success body; omit for responses without one (204). */
  schema?: z.ZodMiniType<T>;
  signal?: AbortSignal;
}

/**
 * Calls the BFF under /api. GETs use cache mode "no-cache": the browser keeps the last body with its
 * ETag and always revalidates with If-None-Match, so an unchanged list costs a 304 and no JSON parse on
 * the server's side, whatever Cache-Control the BFF sends.
 */
export async function apiRequest<T = void>(path: string, options: RequestOptions<T> = {}): Promise<T> {
  const response = await apiFetch(path, "application/json", options);
  if (!options.schema) return undefined as T;

  const parsed = options.schema.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success) {
    throw new ApiError(
      response.status,
      "bad_response",
      "The server sent an answer this page does not understand. Reload the page to get the newest version.",
    );
  }
  return parsed.data;
}

/**
 * The request itself, for apiRequest and for the few callers that read a body other than JSON (a
 * console recording: asciicast, a JSON value a line). `accept` is the media type asked for. Sends the
 * CSRF header on writes; a failed fetch or status becomes an ApiError.
 */
export async function apiFetch(
  path: string,
  accept: string,
  options: { method?: Method; body?: unknown; signal?: AbortSignal } = {},
): Promise<Response> {
  const method = options.method ?? "GET";
  const headers: Record<string, string> = { Accept: accept };
  if (method !== "GET") headers[csrfHeader.name] = csrfHeader.value;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";

  let response: Response;
  try {
    response = await fetch(`/api${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: method === "GET" ? "no-cache" : "no-store",
      credentials: "same-origin",
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new ApiError(
      0,
      "network",
      "Cannot reach Lab Console. Check your connection; the page retries on its own.",
    );
  }
  if (!response.ok) throw await toApiError(response);
  return response;
}

async function toApiError(response: Response): Promise<ApiError> {
  const body: unknown = await response.json().catch(() => undefined);
  return apiErrorOf(response.status, body, response.headers.get("retry-after"));
}

/**
 * The ApiError of a failed answer's status and body, for every way the page asks the BFF (fetch
 * here, XMLHttpRequest for uploads). `retryAfter`: the Retry-After header, if any.
 */
export function apiErrorOf(status: number, body: unknown, retryAfter: string | null = null): ApiError {
  const parsed = ApiErrorBody.safeParse(body);
  if (parsed.success) {
    const { code, message, reason, params } = parsed.data.error;
    return new ApiError(status, code, message, { reason, params, retryAfterSeconds: seconds(retryAfter) });
  }
  if (status >= 500) {
    return new ApiError(status, "server", "Lab Console had a problem answering. Try again in a moment.");
  }
  return new ApiError(status, "http", `The request failed (HTTP ${status}).`);
}

/** Only the delay-seconds form: the BFF never sends an HTTP date. */
function seconds(retryAfter: string | null): number | null {
  const value = Number(retryAfter ?? "");
  return Number.isInteger(value) && value > 0 ? value : null;
}
