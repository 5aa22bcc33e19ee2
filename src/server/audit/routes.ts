// The audit log for instructors: a filtered page as JSON, or everything that matches as JSON lines.
import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { AuditQuery } from "../../common/operations-api.ts";
import { signedInUser } from "../access/policy.ts";
import { parseOrThrow } from "../http/errors.ts";
import type { AuditLog } from "./audit-log.ts";

export function registerAuditRoutes(app: FastifyInstance, { audit }: { audit: AuditLog }): void {
  const instructor = { config: { access: "instructor" } } as const;

  app.get("/api/audit", instructor, async (request, reply) => {
    const query = parseOrThrow(AuditQuery, request.query);
    return reply.header("cache-control", "no-store").send(await audit.list(query));
  });

  app.get("/api/audit/export", instructor, async (request, reply) => {
    const user = signedInUser(request);
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
