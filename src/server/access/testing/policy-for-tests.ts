// The access policy as buildApp applies it, for tests that put a few route groups together on a
// bare fastify app: no websockets, no replicas, no metrics. Without sign-ins, nobody is signed in.
import type { FastifyInstance } from "fastify";
import type { Me, Session } from "../../../common/api.ts";
import { findSignIn } from "../../auth/current-user.ts";
import type { SignIns } from "../../auth/sign-ins.ts";
import { sessionNotFound } from "../../errors/domain-error.ts";
import { createOwnNames } from "../../http/own-names.ts";
import { enforceAccess } from "../policy.ts";

export function enforceAccessForTests(
  app: FastifyInstance,
  deps: { signIns?: SignIns; sessions?: { get(user: Me, id: string): Promise<Session> } },
): void {
  enforceAccess(app, {
    signIn: (request) => (deps.signIns ? findSignIn(request, deps.signIns) : undefined),
    session: (user, id) => deps.sessions?.get(user, id) ?? Promise.reject(sessionNotFound(id)),
    isUpgrade: () => false,
    ownNames: createOwnNames({ allowedOrigins: [] }),
    forwardSecret: "no replicas in this test",
  });
}
