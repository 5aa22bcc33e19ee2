// One request to an LMS and what came of it: every body read with a cap (an LMS is another party: a
// runaway or hostile answer must not fill the BFF's memory), every wait bounded, and every failure an
// LmsError that carries the LMS's own words (truncated) and whether trying again may help. Node's
// global fetch keeps connections to each LMS alive between requests (undici's pool).
import * as z from "zod/mini";

/** What an instructor reads of an LMS's answer: enough for its reason, never a whole error page. */
const reasonLength = 300;
/** An error answer is read this far for its reason; the rest is dropped. */
const errorBodyBytes = 64 * 1024;
const defaultTimeoutMs = 30_000;

export class LmsError extends Error {
  constructor(
    /** The LMS's HTTP status; undefined when no answer came (network, timeout, an unreadable body). */
    readonly status: number | undefined,
    message: string,
    /** When the LMS said to come back (Retry-After), in milliseconds from now. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "LmsError";
  }

  /** Another try may well succeed: no answer, 408, 429 or 5xx. */
  get transient(): boolean {
    const { status } = this;
    return status === undefined || status === 408 || status === 429 || status >= 500;
  }
}

export interface LmsRequest {
  method: "GET" | "POST";
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** The caller's: aborting it abandons the request and rethrows the abort's reason. */
  signal?: AbortSignal;
  /** A 2xx body larger than this fails the request. */
  maxBytes: number;
  timeoutMs?: number;
  /** What the request is for, in an error's message: "the score for alice". */
  what: string;
}

export interface LmsResponse {
  status: number;
  headers: Headers;
  text: string;
}

export async function lmsRequest(request: LmsRequest): Promise<LmsResponse> {
  const timeoutMs = request.timeoutMs ?? defaultTimeoutMs;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  const host = request.url.host;
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal,
      // A redirect would carry the bearer token to wherever the LMS (or whoever answers for it) points.
      redirect: "error",
    });
    if (response.ok) {
      return {
        status: response.status,
        headers: response.headers,
        text: await readCapped(response, request),
      };
    }
    const text = await readTruncated(response, errorBodyBytes);
    throw new LmsError(
      response.status,
      `${host} refused ${request.what} (HTTP ${response.status}): ${lmsReason(text) || response.statusText || "no reason given"}`,
      retryAfterMs(response.headers.get("retry-after")),
    );
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    if (error instanceof LmsError) throw error;
    if (timeout.aborted) {
      throw new LmsError(undefined, `${host} did not answer ${request.what} within ${timeoutMs / 1000} s.`);
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    // undici's words for a redirect refused by `redirect: "error"`; other words still say what failed.
    if (cause?.message === "unexpected redirect") {
      throw new LmsError(
        undefined,
        `${host} answered ${request.what} with a redirect, which Lab Console does not follow: ` +
          "its access token goes only to the address the LMS gave.",
      );
    }
    const detail = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new LmsError(undefined, `${host} could not be reached for ${request.what} (${detail}).`);
  }
}

async function readCapped(response: Response, request: LmsRequest): Promise<string> {
  const declared = Number(response.headers.get("content-length"));
  const tooLarge = () =>
    new LmsError(
      undefined,
      `${request.url.host} answered ${request.what} with more than ${request.maxBytes} bytes; the answer was dropped.`,
    );
  if (declared > request.maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const { text, complete } = await readUpTo(response, request.maxBytes);
  if (!complete) throw tooLarge();
  return text;
}

async function readTruncated(response: Response, maxBytes: number): Promise<string> {
  try {
    return (await readUpTo(response, maxBytes)).text;
  } catch {
    // The reason is a courtesy: an error answer cut off mid-way still has its status.
    return "";
  }
}

/**
 * The LMS's reason in a body: JSON `errors` (Canvas: a list of { message } or of strings, or
 * messages by field), `message`, `error_description` (OAuth2) or `error`; otherwise the text itself,
 * tags dropped. Whitespace runs become one space; cut at 300 characters.
 */
export function lmsReason(body: string): string {
  let reason: string;
  try {
    reason = reasonOf(JSON.parse(body) as unknown, false) || body;
  } catch {
    reason = body.replace(/<(script|style)[\s\S]*?<\/\1>/gi, " ").replace(/<[^>]*>/g, " ");
  }
  const flat = reason.replace(/\s+/g, " ").trim();
  return flat.length > reasonLength ? `${flat.slice(0, reasonLength - 1)}…` : flat;
}

function reasonOf(value: unknown, byField: boolean): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value))
    return value
      .map((each) => reasonOf(each, false))
      .filter(Boolean)
      .join("; ");
  if (typeof value !== "object" || value === null) return "";
  const fields = value as Record<string, unknown>;
  for (const key of ["errors", "message", "error_description", "error", "detail", "title"]) {
    const reason = reasonOf(fields[key], key === "errors");
    if (reason) return reason;
  }
  if (!byField) return "";
  // Messages by field ({ "errors": { "scoreGiven": ["must be a number"] } }), each with its field.
  return Object.entries(fields)
    .map(([field, messages]) => {
      const reason = reasonOf(messages, false);
      return reason ? `${field}: ${reason}` : "";
    })
    .filter(Boolean)
    .join("; ");
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The rel="next" target of a Link header, resolved against the page's URL. Only one on the same
 * origin: the bearer token goes with the request, and a page must not send it elsewhere.
 */
export function nextPageUrl(link: string | null, page: URL): URL | undefined {
  if (!link) return undefined;
  for (const match of link.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const [, target = "", params = ""] = match;
    const rel = /;\s*rel\s*=\s*"?([^";]+)"?/i.exec(params)?.[1] ?? "";
    if (!rel.toLowerCase().split(/\s+/).includes("next")) continue;
    try {
      const next = new URL(target, page);
      return next.origin === page.origin ? next : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** A 2xx body as `schema` has it; anything else is the LMS's fault, said as such. */
export function parseLmsJson<Schema extends z.ZodMiniType>(
  text: string,
  schema: Schema,
  url: URL,
  what: string,
): z.output<Schema> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LmsError(
      undefined,
      `${url.host} answered with something other than JSON where ${what} was due.`,
    );
  }
  const parsed = z.safeParse(schema, value);
  if (!parsed.success)
    throw new LmsError(undefined, `${url.host} answered with something other than ${what}.`);
  return parsed.data;
}

/** The body up to `maxBytes`; `complete` false when there was more, which is then not read. */
async function readUpTo(response: Response, maxBytes: number): Promise<{ text: string; complete: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { text: "", complete: true };
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      chunks.push(value.subarray(0, value.byteLength - (size - maxBytes)));
      await reader.cancel();
      return { text: Buffer.concat(chunks).toString("utf8"), complete: false };
    }
    chunks.push(value);
  }
  return { text: Buffer.concat(chunks).toString("utf8"), complete: true };
}
