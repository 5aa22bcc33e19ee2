// Builds the BFF from its dependencies without listening: main.ts listens, tests and the bench
// build it with their own dependencies.
import fastifyCookie from "@fastify/cookie";
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { Lab } from "../common/lab.ts";
import type { Authenticator } from "./auth/authenticator.ts";
import type { LoginSessions } from "./auth/login-sessions.ts";
import { registerAuthRoutes } from "./auth/routes.ts";
import type { SessionsReadMode } from "./config.ts";
import { registerHealthRoutes } from "./health-routes.ts";
import { createCsrfGuard } from "./http/csrf.ts";
import { sendError } from "./http/errors.ts";
import type { ClusterClient } from "./kube/client.ts";
import { registerLabRoutes } from "./lab-routes.ts";
import { createSessionReads } from "./sessions/reads.ts";
import { registerSessionRoutes } from "./sessions/routes.ts";
import { SessionService } from "./sessions/service.ts";
import { registerWeb } from "./spa/static.ts";

export interface AppDeps {
  cluster: ClusterClient;
  sessionsReadMode: SessionsReadMode;
  authenticator: Authenticator;
  loginSessions: LoginSessions;
  /** Signs the session cookie. */
  cookieSecret: string;
  labs: Lab[];
  allowedOrigins: string[];
  trustProxy: boolean;
  /** The built SPA (dist/web); the API alone when absent. */
  webRoot?: string;
  logger?: FastifyServerOptions["logger"];
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // Browsers poll every few seconds: per-request log lines would drown everything else.
  const app = Fastify({
    logger: deps.logger ?? false,
    trustProxy: deps.trustProxy,
    logController: new LogController({ disableRequestLogging: true }),
  });
  await app.register(fastifyCookie, { secret: deps.cookieSecret });

  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  app.addHook("onRequest", createCsrfGuard(deps.allowedOrigins));
  app.addHook("onSend", async (_request, reply) => {
    reply.header("x-content-type-options", "nosniff");
    reply.header("x-frame-options", "DENY");
    reply.header("referrer-policy", "same-origin");
  });

  const reads = createSessionReads(deps.cluster, deps.sessionsReadMode, app.log);
  const sessions = new SessionService({ cluster: deps.cluster, source: reads.source, labs: deps.labs });
  const { loginSessions } = deps;

  registerHealthRoutes(app, () => reads.readiness());
  registerAuthRoutes(app, { authenticator: deps.authenticator, loginSessions });
  registerLabRoutes(app, { labs: deps.labs, loginSessions });
  registerSessionRoutes(app, { sessions, loginSessions });
  await registerWeb(app, deps.webRoot);

  reads.start();
  app.addHook("onClose", () => reads.stop());
  return app;
}
