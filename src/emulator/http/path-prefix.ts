// The API behind a path prefix, as it is reached through Rancher's cluster proxy
// (https://rancher.example/k8s/clusters/c-1) or an API gateway: the kubeconfig's server URL carries
// the prefix, the proxy strips it, and the API server behind it never learns of it (its answers, e.g.
// OpenAPI's serverRelativeURL, stay unprefixed). A request without the prefix never reaches the API,
// so clients that drop the server URL's path get the proxy's own 404 instead of a lucky answer.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Handlers } from "./handlers.ts";
import { writeRawResponse } from "./upgrade.ts";

/** "/k8s/clusters/c-1" (leading slash, none at the end); "" means no prefix. Throws on anything else. */
export function normalizePathPrefix(prefix: string | undefined): string {
  const trimmed = (prefix ?? "").replace(/\/+$/, "");
  if (trimmed === "") return "";
  const segments = trimmed.split("/").slice(1);
  const valid =
    trimmed.startsWith("/") &&
    segments.every((segment) => /^[A-Za-z0-9._~-]+$/.test(segment) && segment !== "." && segment !== "..");
  if (!valid) {
    throw new Error(
      `the path prefix must look like /k8s/clusters/c-1 (segments of letters, digits, ".", "_", "~", "-"), got "${prefix}"`,
    );
  }
  return trimmed;
}

/** The path below the prefix ("/" for the prefix itself), or undefined when the URL is not under it. */
function stripPrefix(url: string, prefix: string): string | undefined {
  if (!url.startsWith(prefix)) return undefined;
  const rest = url.slice(prefix.length);
  if (rest === "") return "/";
  if (rest.startsWith("?")) return `/${rest}`;
  return rest.startsWith("/") ? rest : undefined;
}

// What Go's http.NotFound writes: most proxies in front of an API server are Go programs.
const notFoundBody = "404 page not found\n";
const notFoundHeaders = { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" };

export function withPathPrefix(api: Handlers, prefix: string): Handlers {
  if (prefix === "") return api;
  return {
    onRequest: (request: IncomingMessage, response: ServerResponse) => {
      const below = stripPrefix(request.url ?? "/", prefix);
      if (below === undefined) {
        response.writeHead(404, notFoundHeaders);
        response.end(notFoundBody);
        return;
      }
      request.url = below;
      api.onRequest(request, response);
    },
    onUpgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const below = stripPrefix(request.url ?? "/", prefix);
      if (below === undefined) {
        socket.on("error", () => socket.destroy());
        writeRawResponse(socket, 404, notFoundHeaders, notFoundBody);
        return;
      }
      request.url = below;
      api.onUpgrade(request, socket, head);
    },
  };
}
