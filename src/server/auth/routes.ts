// Sign-in, sign-out and "who am I".
import type { FastifyInstance } from "fastify";
import { LoginRequest, type Me } from "../../common/api.ts";
import { HttpError, parseOrThrow } from "../http/errors.ts";
import type { Authenticator } from "./authenticator.ts";
import { clearSessionCookie, findLoginSession, requireUser, setSessionCookie } from "./current-user.ts";
import type { LoginSessions } from "./login-sessions.ts";

export function registerAuthRoutes(
  app: FastifyInstance,
  { authenticator, loginSessions }: { authenticator: Authenticator; loginSessions: LoginSessions },
): void {
  app.post("/api/auth/login", async (request, reply): Promise<Me> => {
    const { username, password } = parseOrThrow(LoginRequest, request.body);
    const user = await authenticator.login(username, password);
    if (!user) throw new HttpError(401, "unauthenticated", "Wrong user name or password.");
    // A fresh id on every sign-in, so an id planted before sign-in is worthless afterwards.
    const previous = findLoginSession(request, loginSessions);
    if (previous) loginSessions.end(previous.id);
    setSessionCookie(request, reply, loginSessions.create(user));
    return user;
  });

  app.post("/api/auth/logout", async (request, reply) => {
    const session = findLoginSession(request, loginSessions);
    if (session) loginSessions.end(session.id);
    clearSessionCookie(request, reply);
    return reply.status(204).send();
  });

  app.get("/api/me", async (request): Promise<Me> => requireUser(request, loginSessions));
}
