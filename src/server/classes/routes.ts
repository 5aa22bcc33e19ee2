// The class schedule: staff see it with each class's warm pool; instructors schedule and cancel.
import type { FastifyInstance } from "fastify";
import * as z from "zod/mini";
import { NewClass, type ClassList, type ScheduledClass } from "../../common/classes-api.ts";
import { signedInUser } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { parseOrThrow } from "../http/errors.ts";
import type { ClassSchedule } from "./class-schedule.ts";

const ClassParams = z.object({ id: z.string().check(z.regex(/^[a-z0-9-]{1,63}$/, "not a class id")) });

export function registerClassRoutes(
  app: FastifyInstance,
  deps: { schedule: ClassSchedule; audit: AuditLog },
): void {
  app.get("/api/classes", { config: { access: "staff" } }, async (): Promise<ClassList> => {
    return { items: await deps.schedule.list() };
  });

  app.post("/api/classes", { config: { access: "instructor" } }, async (request, reply) => {
    const user = signedInUser(request);
    const added: ScheduledClass = await deps.schedule.add(
      parseOrThrow(NewClass, request.body),
      user.username,
    );
    await deps.audit.record(
      {
        action: "class-schedule",
        actor: user,
        labId: added.labId,
        details: {
          class: added.id,
          startsAt: added.startsAt,
          endsAt: added.endsAt,
          expected: added.expected,
        },
      },
      request,
    );
    return reply.status(201).send(added);
  });

  app.delete("/api/classes/:id", { config: { access: "instructor" } }, async (request, reply) => {
    const user = signedInUser(request);
    const { id } = parseOrThrow(ClassParams, request.params);
    const cancelled = await deps.schedule.cancel(id);
    await deps.audit.record(
      { action: "class-cancel", actor: user, labId: cancelled.labId, details: { class: id } },
      request,
    );
    return reply.status(204).send();
  });
}
