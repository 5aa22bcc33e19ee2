// Cross-site request forgery guard for every state-changing API call. A cross-site form or a simple
// fetch cannot set a custom header without a CORS preflight we never grant; the Origin check also
// stops a foreign page that somehow holds the header.
import type { FastifyRequest } from "fastify";
import { csrfHeader } from "../../common/api.ts";
import { HttpError } from "./errors.ts";
import type { OwnNames } from "./own-names.ts";

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * A form another site posts by design (an LMS's LTI login and launch): no header, a foreign
     * Origin. Such a route must prove the request itself (a signed id_token, one-time state).
     */
    crossSiteForm?: true;
  }
}

export function createCsrfGuard(ownNames: OwnNames) {
  return async function csrfGuard(request: FastifyRequest): Promise<void> {
    if (safeMethods.has(request.method) || request.routeOptions.config.crossSiteForm) return;
    if (request.headers[csrfHeader.name.toLowerCase()] !== csrfHeader.value) {
      throw new HttpError(
        403,
        "csrf",
        `Requests that change something must carry the header ${csrfHeader.name}: 1.`,
      );
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !ownNames.isOwnOrigin(origin, request)) {
      throw new HttpError(403, "csrf", `Requests from ${origin} are not allowed.`);
    }
  };
}
