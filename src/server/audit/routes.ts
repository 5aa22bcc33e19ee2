// The audit log for instructors: a filtered page as JSON, or everything that matches as JSON lines.
import { Readable } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AuditQuery } from "../../common/operations-api.ts";
import { requireUser } from "../auth/current-user.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { HttpError, parseOrThrow } from "../http/errors.ts";
import type { AuditLog } from "./audit-log.ts";

export function registerAuditRoutes(
  app: FastifyInstance,
  deps: { audit: AuditLog; loginSessions: LoginSessions },
): void {
  addRoutes(app, deps);
}

function addRoutes(
  app: FastifyInstance,
  { audit, loginSessions }: { audit: AuditLog; loginSessions: LoginSessions },
) {
  const instructor = (request: FastifyRequest) => {
    const user = requireUser(request, loginSessions);
    if (user.role !== "instructor")
      throw new HttpError(403, "forbidden", "Only instructors can read the audit log.");
    return user;
  };

  app.get("/api/audit", async (request, reply) => {
    instructor(request);
    const query = parseOrThrow(AuditQuery, request.query);
    return reply.header("cache-control", "no-store").send(await audit.list(query));
  });

  app.get("/api/audit/export", async (request, reply) => {
    const user = instructor(request);
    const { before: _before, limit: _limit, ...filter } = parseOrThrow(AuditQuery, request.query);
    // Exporting the log is itself an action worth knowing about.
    await audit.record({ action: "export", actor: user, details: { what: "audit", ...filter } }, request);
    const lines = Readable.from(
      (async function* () {
        for await (const entry of audit.entries(filter)) yield `${JSON.stringify(entry)}\n`;
      })(),
    );
    return reply
      .header("cache-control", "no-store")
      .header("content-disposition", 'attachment; filename="lab-console-audit.jsonl"')
      .type("application/x-ndjson; charset=utf-8")
      .send(lines);
  });
}
