// The access policy as buildApp applies it, for tests that put a few route groups together on a
// bare fastify app: no websockets, no replicas, no metrics.
import type { FastifyInstance } from "fastify";
import type { Me, Session } from "../../../common/api.ts";
import { findSignIn } from "../../auth/current-user.ts";
import type { SignIns } from "../../auth/sign-ins.ts";
import { notFound } from "../../http/errors.ts";
import { createOwnNames } from "../../http/own-names.ts";
import { enforceAccess } from "../policy.ts";

export function enforceAccessForTests(
  app: FastifyInstance,
  deps: { signIns: SignIns; sessions?: { get(user: Me, id: string): Promise<Session> } },
): void {
  enforceAccess(app, {
    signIn: (request) => findSignIn(request, deps.signIns),
    session: (user, id) =>
      deps.sessions?.get(user, id) ?? Promise.reject(notFound(`There is no session ${id}.`)),
    isUpgrade: () => false,
    ownNames: createOwnNames({ allowedOrigins: [] }),
    forwardSecret: "no replicas in this test",
  });
}
