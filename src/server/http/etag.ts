// ETags so that a browser poll whose answer has not changed costs a 304 and no body. When the data
// has a version (the watch cache), the tag is derived from it and checked before any body is built;
// otherwise it is a hash of the body. Weak, because equal JSON may be encoded differently.
import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";

function etagOf(text: string): string {
  return `W/"${createHash("sha1").update(text).digest("base64url")}"`;
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => tag.trim() === "*" || opaque(tag) === opaque(etag));
}

/**
 * Answers with `produce()`'s body, or 304 when the browser already has it. When `versionKey` is
 * given the tag comes from it and a matching poll is answered before any body is built; the key
 * must name everything the body depends on (data version, who asks, what they asked). Without one
 * the tag is a hash of the body.
 */
export async function sendWithEtag(
  request: FastifyRequest,
  reply: FastifyReply,
  versionKey: string | undefined,
  produce: () => Promise<unknown>,
): Promise<FastifyReply> {
  const ifNoneMatch = request.headers["if-none-match"];
  if (versionKey === undefined) {
    const body = await produce();
    const etag = etagOf(JSON.stringify(body));
    withCacheHeaders(reply, etag);
    return matches(ifNoneMatch, etag) ? reply.status(304).send() : reply.send(body);
  }
  const etag = etagOf(versionKey);
  if (matches(ifNoneMatch, etag)) return withCacheHeaders(reply, etag).status(304).send();
  // Built after the tag was taken: if the data moves on meanwhile, the next poll just gets a 200 again.
  const body = await produce();
  return withCacheHeaders(reply, etag).send(body);
}

function withCacheHeaders(reply: FastifyReply, etag: string): FastifyReply {
  // no-cache: the browser may keep the copy but must ask each time; the ETag makes asking cheap.
  return reply.header("etag", etag).header("cache-control", "private, no-cache");
}
