// The few pages the BFF itself serves during LTI flows, where the SPA cannot be: inside an LMS's
// frame (the SPA is never framed), and on the way back to an LMS (the SPA may post forms only to this
// origin). Plain HTML, no inline script, each with the narrowest policy that lets it work.
import type { FastifyInstance, FastifyReply } from "fastify";

const style =
  "body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}" +
  "a.button,button{display:inline-block;padding:.6rem 1.2rem;background:#1d4ed8;color:#fff;border:0;border-radius:6px;text-decoration:none;font-size:1rem;cursor:pointer}";

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
    `<title>${escape(title)}</title><style>${style}</style></head><body>${body}</body></html>`
  );
}

/** The page under its own policy: never cached (each carries a one-time link or answer). */
function sendPage(reply: FastifyReply, policy: string, title: string, body: string) {
  return reply
    .header("content-security-policy", policy)
    .header("cache-control", "no-store")
    .type("text/html; charset=utf-8")
    .send(page(title, body));
}

const heading = (title: string, text: string) => `<h1>${escape(title)}</h1><p>${escape(text)}</p>`;

function hiddenInputs(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join("");
}

/**
 * Framed in the LMS: any site may frame it. It carries nothing an attacker could use without the
 * launch itself, and a link opens Lab Console at top level, where its cookie is first-party.
 */
export function sendFramedPage(
  reply: FastifyReply,
  status: number,
  title: string,
  text: string,
  link: { href: string; label: string },
) {
  return sendPage(
    reply.code(status),
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors *",
    title,
    heading(title, text) +
      `<p><a class="button" href="${escape(link.href)}" target="_blank" rel="noopener">${escape(link.label)}</a></p>`,
  );
}

/** Posts a signed answer to an LMS: the form submits itself (auto-submit.js), or with its button. */
export function sendPostToLmsPage(
  reply: FastifyReply,
  target: URL,
  fields: Record<string, string>,
  label: string,
) {
  return sendPage(
    reply,
    `default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; form-action ${target.origin}; frame-ancestors *`,
    label,
    `<form method="post" action="${escape(target.href)}">${hiddenInputs(fields)}<p>Returning to your course…</p>` +
      `<button type="submit">${escape(label)}</button></form><script src="/api/lti/auto-submit.js"></script>`,
  );
}

/**
 * Asks the person to confirm who they sign in as, with a form posted to this origin. Never framed:
 * a click on it must be the person's own.
 */
export function sendConfirmPage(
  reply: FastifyReply,
  page_: { title: string; text: string; action: string; fields: Record<string, string>; label: string },
) {
  return sendPage(
    reply.header("x-frame-options", "DENY"),
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    page_.title,
    heading(page_.title, page_.text) +
      `<form method="post" action="${escape(page_.action)}">${hiddenInputs(page_.fields)}` +
      `<button type="submit">${escape(page_.label)}</button></form>`,
  );
}

/** The end of a dynamic registration, in the LMS's frame or window. */
export function sendRegisteredPage(reply: FastifyReply, title: string, text: string, closeLabel?: string) {
  // Dynamic Registration's end: the LMS closes its dialog when told so (registration-close.js).
  const close = closeLabel
    ? `<p><button type="button" id="close">${escape(closeLabel)}</button></p><script src="/api/lti/registration-close.js"></script>`
    : "";
  return sendPage(
    reply,
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; frame-ancestors *",
    title,
    heading(title, text) + close,
  );
}

/** The pages' scripts, served from this origin since their policies allow no inline script. */
const scripts: Record<string, string> = {
  // sendPostToLmsPage's: submits the page's form as soon as it is read.
  "/api/lti/auto-submit.js": "document.forms[0].submit();\n",
  // sendRegisteredPage's button: LTI Dynamic Registration's message to the LMS that it is done.
  "/api/lti/registration-close.js":
    'document.getElementById("close").addEventListener("click", () => {\n' +
    '  (window.opener || window.parent).postMessage({ subject: "org.imsglobal.lti.close" }, "*");\n' +
    "});\n",
};

export function registerPageScripts(app: FastifyInstance): void {
  for (const [path, script] of Object.entries(scripts)) {
    app.get(path, { config: { access: "public" } }, async (_request, reply) =>
      reply
        .type("text/javascript; charset=utf-8")
        .header("cache-control", "public, max-age=3600")
        .send(script),
    );
  }
}
