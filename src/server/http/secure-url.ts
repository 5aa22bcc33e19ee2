// Addresses that tokens, codes or keys cross (an OpenID provider's, an LMS's): https, or plain http
// only where nobody else can listen (loopback, for tests and a provider on the developer's machine).
import { z } from "zod";

export function isLoopbackUrl(url: URL): boolean {
  return ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
}

/** Text that is such an address, as a URL; `missing` is the message when it is absent. */
export function secureUrl(missing?: string) {
  return z
    .string(missing === undefined ? undefined : { error: missing })
    .transform((text, context) => {
      try {
        return new URL(text);
      } catch {
        context.addIssue({ code: "custom", message: "must be an absolute URL" });
        return z.NEVER;
      }
    })
    .refine(
      (url) => url.protocol === "https:" || (url.protocol === "http:" && isLoopbackUrl(url)),
      "must use https (plain http only on 127.0.0.1 or localhost, for tests)",
    );
}
