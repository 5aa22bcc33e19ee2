// The sessions API: parse, find the user, call the service. Lists and single sessions carry ETags
// so an unchanged poll answers 304.
import type { FastifyInstance } from "fastify";
import * as z from "zod/mini";
import { CreateSessionRequest, SessionListQuery } from "../../common/api.ts";
import { labIdPattern } from "../../common/lab.ts";
import { grantedSession, signedInUser } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { parseOrThrow } from "../http/errors.ts";
import { sendWithEtag } from "../http/etag.ts";
import { RateLimiter, refuseWhileLimited } from "../http/rate-limit.ts";
import type { SessionService } from "./service.ts";

const CreateBody = z.extend(CreateSessionRequest, {
  labId: CreateSessionRequest.shape.labId.check(z.regex(labIdPattern, "not a lab id")),
});

export function registerSessionRoutes(
  app: FastifyInstance,
  { sessions, audit }: { sessions: SessionService; audit?: AuditLog },
): void {
  // Each launch creates a VM: a person who launches and ends in a loop would churn the cluster.
  // Counted per person, on launches that created one.
  const launches = new RateLimiter({ burst: 10, refillMs: 6_000 });

  const signedIn = { config: { access: "signed-in" } } as const;
  const ownerOrStaff = { config: { access: "session" } } as const;

  app.get("/api/sessions", signedIn, async (request, reply) => {
    const user = signedInUser(request);
    const query = parseOrThrow(SessionListQuery, request.query);
    return sendWithEtag(request, reply, sessions.listVersion(user, query), () => sessions.list(user, query));
  });

  app.post("/api/sessions", signedIn, async (request, reply) => {
    const user = signedInUser(request);
    const { labId } = parseOrThrow(CreateBody, request.body);
    // Taken before the await, so launches sent at once cannot all pass the check; given back when
    // no VM was created.
    if (!launches.tryTake(user.username)) {
      refuseWhileLimited(launches.waitSeconds(user.username), {
        reason: "launch_too_often",
        message: (seconds) => `You started sessions too quickly. Try again in ${seconds} s.`,
      });
    }
    let session;
    try {
      session = await sessions.create(user, labId);
    } catch (error) {
      launches.giveBack(user.username);
      throw error;
    }
    await audit?.record(
      { action: "launch", actor: user, session, details: { start: session.start } },
      request,
    );
    return reply.status(201).send(session);
  });

  app.get("/api/sessions/:id", ownerOrStaff, async (request, reply) => {
    const user = signedInUser(request);
    const { id } = grantedSession(request);
    // Read again after the version: a body older than its ETag would be answered 304 until the next change.
    return sendWithEtag(request, reply, sessions.sessionVersion(user, id), () => sessions.get(user, id));
  });

  app.delete("/api/sessions/:id", ownerOrStaff, async (request, reply) => {
    const user = signedInUser(request);
    const session = await sessions.delete(user, grantedSession(request).id);
    await audit?.record({ action: "end", actor: user, session }, request);
    return reply.status(202).send(session);
  });
}
