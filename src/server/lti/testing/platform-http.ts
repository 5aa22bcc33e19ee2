// The test platform's few HTTP habits: bodies read whole, answers in one call, and the small
// server-rendered pages an LMS shows (escaped text, and forms that post themselves).
import type { IncomingMessage, ServerResponse } from "node:http";

/** An answer a handler gives up with; the router turns it into the response. */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const maxBodyBytes = 1024 * 1024;

export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    if (size > maxBodyBytes) throw new HttpFailure(413, "request body too large");
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The media type of a Content-Type header, without its parameters, lower case. */
export function mediaTypeOf(header: string | undefined): string {
  return (header ?? "").split(";")[0]!.trim().toLowerCase();
}

export async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  const type = mediaTypeOf(request.headers["content-type"]);
  if (type !== "application/x-www-form-urlencoded")
    throw new HttpFailure(415, "expected application/x-www-form-urlencoded");
  return new URLSearchParams(await readBody(request));
}

/** A JSON body whose Content-Type must be exactly `mediaType` (the LTI services name their own types). */
export async function readJson(request: IncomingMessage, mediaType: string): Promise<unknown> {
  const type = mediaTypeOf(request.headers["content-type"]);
  if (type !== mediaType) throw new HttpFailure(415, `Content-Type must be ${mediaType}, was "${type}"`);
  try {
    return JSON.parse(await readBody(request)) as unknown;
  } catch {
    throw new HttpFailure(400, "body is not JSON");
  }
}

/**
 * The LTI services say which media type a request Accepts; a client that does not ask for it gets 406,
 * so a tool that forgets the header is found here rather than by the first strict LMS.
 */
export function requireAccept(request: IncomingMessage, mediaType: string): void {
  const accepted = (request.headers.accept ?? "").split(",").map((part) => mediaTypeOf(part));
  if (!accepted.includes(mediaType))
    throw new HttpFailure(406, `Accept must list ${mediaType}, was "${request.headers.accept ?? ""}"`);
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  contentType = "application/json",
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...headers,
  });
  response.end(text);
}

export function sendText(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

export function sendHtml(response: ServerResponse, status: number, html: string): void {
  response.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(html),
    "cache-control": "no-store",
  });
  response.end(html);
}

export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>`;
}

/**
 * A form that posts its fields to `action` by itself, keeping a visible button for a browser without
 * script (and for a cookie-jar client, which reads the fields and posts them as the button would).
 */
export function autoPostPage(title: string, action: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("\n");
  return page(
    title,
    `<form id="auto-post" method="post" action="${escapeHtml(action)}">
${inputs}
<button type="submit">Continue</button>
</form>
<script>document.querySelector("#auto-post button").click();</script>`,
  );
}
