// Only our own names reach the server (DNS rebinding): a page on evil.example whose name is made to
// resolve to 127.0.0.1 reaches a local `npm start` with `Host: evil.example`, and the browser treats
// it as that page's own origin, cookies and all. So the Host (and, behind a trusted proxy, the
// forwarded host) must be the configured public address, a loopback name or an IP literal (a
// rebinding needs a name), and an Origin must be a configured one or, on such a host, the host itself.
import type { FastifyRequest } from "fastify";
import { HttpError } from "./errors.ts";

export interface OwnNames {
  /** Origins that may send mutations and open sockets: PUBLIC_URL's and LAB_ALLOWED_ORIGINS. */
  origins: ReadonlySet<string>;
  /** Refuses a request addressed to any other name, before routing and before every upgrade. */
  hostGuard(request: FastifyRequest): Promise<void>;
  /** The Origin is ours: configured, or the request's own loopback or IP-literal host. */
  isOwnOrigin(origin: string, request: FastifyRequest): boolean;
}

export function createOwnNames(options: { publicUrl?: string; allowedOrigins: readonly string[] }): OwnNames {
  const origins = new Set<string>([
    ...(options.publicUrl === undefined ? [] : [new URL(options.publicUrl).origin]),
    ...options.allowedOrigins,
  ]);
  const hosts = new Set([...origins].map((origin) => new URL(origin).host));
  const isOwnHost = (host: string) => hosts.has(host) || cannotBeRebound(host);

  return {
    origins,
    async hostGuard(request) {
      // request.host is X-Forwarded-Host only when TRUST_PROXY trusts the peer that sent it: the
      // same decision as request.ip and request.protocol (client-address.ts).
      const forwarded = request.host !== request.headers.host ? request.host : undefined;
      for (const host of [request.headers.host, forwarded]) {
        if (host === undefined || isOwnHost(host.toLowerCase())) continue;
        throw new HttpError(
          421,
          "wrong_host",
          `This server does not answer to ${JSON.stringify(host)}. ` +
            "Open it by its own address; an operator sets that address in PUBLIC_URL.",
        );
      }
    },
    isOwnOrigin(origin, request) {
      if (origins.has(origin)) return true;
      const own = `${request.protocol}://${request.host}`.toLowerCase();
      return origin.toLowerCase() === own && cannotBeRebound(request.host.toLowerCase());
    },
  };
}

/** localhost (and *.localhost, which browsers resolve to loopback themselves) or an IP literal. */
function cannotBeRebound(host: string): boolean {
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return false;
  }
  return (
    hostname === "localhost" ||
    hostname.endsWith(".localhost") ||
    /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname) ||
    hostname.startsWith("[")
  );
}
