// Browser hardening on every answer, so that a flaw letting markup into a page still cannot load script
// from elsewhere or send what it finds away, and no other site can frame the console to trick a click.
// The CSP is what the built SPA and xterm.js live with: scripts only from our own origin (the build has
// no inline script), styles inline too (xterm.js writes its own <style> element), sockets and fetches to
// our own origin, no framing but for the deep-link picker's page.
import type { FastifyReply, FastifyRequest } from "fastify";

const policyWithoutFraming = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
];
const contentSecurityPolicy = [...policyWithoutFraming, "frame-ancestors 'none'"].join("; ");
// The LMS opens "add content" in a frame and reads the answer from that frame (docs/lti.md), so the
// SPA's picker page may be framed by any LMS. No clickjacking comes of it: the page acts only with a
// deep-linking request's id in its path, which only the launched LMS frame was given.
const framedPickerPolicy = [...policyWithoutFraming, "frame-ancestors *"].join("; ");
const framedPickerPath = /^\/lti\/deep-links\/[^/?]+(?:\?|$)/;

/** The SPA's document of the deep-link picker, the one page of the SPA an LMS may frame. */
function isFramedPicker(request: FastifyRequest, reply: FastifyReply): boolean {
  return (
    (request.method === "GET" || request.method === "HEAD") &&
    framedPickerPath.test(request.url) &&
    String(reply.getHeader("content-type") ?? "").startsWith("text/html")
  );
}

const permissionsPolicy = "camera=(), microphone=(), geolocation=(), usb=(), payment=(), serial=()";

export async function securityHeaders(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  // A page that sets its own policy (the LTI pages an LMS frames, or that post to an LMS, or that
  // must never be framed) keeps it, with its own X-Frame-Options or none.
  if (!reply.hasHeader("content-security-policy")) {
    if (isFramedPicker(request, reply)) {
      reply.header("content-security-policy", framedPickerPolicy);
    } else {
      reply.header("content-security-policy", contentSecurityPolicy);
      reply.header("x-frame-options", "DENY");
    }
  }
  reply.header("cross-origin-opener-policy", "same-origin");
  reply.header("permissions-policy", permissionsPolicy);
  reply.header("x-content-type-options", "nosniff");
  reply.header("referrer-policy", "same-origin");
  // Only over TLS (behind TRUST_PROXY, the proxy's https counts): over plain HTTP browsers ignore it.
  if (request.protocol === "https") reply.header("strict-transport-security", "max-age=31536000");
}
