// Announcements: staff send one to a lab or a section of it and list what they sent; the session's
// owner reads what their session shows and dismisses it. Sending is audited with the text.
import type { FastifyInstance } from "fastify";
import * as z from "zod/mini";
import { NewAnnouncement, type AnnouncementList } from "../../common/announcements-api.ts";
import { grantedSession, signedInUser } from "../access/policy.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import { parseOrThrow } from "../http/errors.ts";
import { sendWithEtag } from "../http/etag.ts";
import { LabIdParams } from "../http/params.ts";
import { RateLimiter } from "../http/rate-limit.ts";
import type { Announcements } from "./announcements.ts";

const AnnouncementParams = z.object({
  announcementId: z.string().check(z.regex(/^[a-z0-9]{1,40}$/, "not an announcement id")),
});

export function registerAnnouncementRoutes(
  app: FastifyInstance,
  deps: { announcements: Announcements; audit: AuditLog },
): void {
  const { announcements, audit } = deps;
  // Each one lands on every student's screen: a script (or a stuck key) sending in a loop would bury
  // the class in banners. Counted per person.
  const sends = new RateLimiter({ burst: 10, refillMs: 6_000 });

  const staff = { config: { access: "staff" } } as const;
  const owner = { config: { access: "session-owner" } } as const;

  app.post("/api/labs/:labId/announcements", staff, async (request, reply) => {
    const user = signedInUser(request);
    const { labId } = parseOrThrow(LabIdParams, request.params);
    const input = parseOrThrow(NewAnnouncement, request.body);
    sends.takeOrRefuse(user.username, {
      reason: "announce_too_often",
      message: (seconds) => `You sent many announcements in a row. Try again in ${seconds} s.`,
    });
    const sent = await announcements.send(user, labId, input);
    await audit.record(
      {
        action: "announcement-send",
        actor: user,
        labId,
        details: { announcement: sent.id, section: sent.section, class: sent.classId, text: sent.text },
      },
      request,
    );
    return reply.status(201).send(sent);
  });

  app.get("/api/labs/:labId/announcements", staff, async (request, reply) => {
    const user = signedInUser(request);
    const { labId } = parseOrThrow(LabIdParams, request.params);
    return sendWithEtag(request, reply, undefined, async (): Promise<AnnouncementList> => ({
      items: await announcements.listForStaff(user, labId),
    }));
  });

  // Every student's session page polls this every few seconds: an unchanged answer is a 304.
  app.get("/api/sessions/:id/announcements", owner, async (request, reply) => {
    const session = grantedSession(request);
    return sendWithEtag(request, reply, undefined, async (): Promise<AnnouncementList> => ({
      items: await announcements.shownTo(session),
    }));
  });

  app.post("/api/sessions/:id/announcements/:announcementId/dismiss", owner, async (request, reply) => {
    const { announcementId } = parseOrThrow(AnnouncementParams, request.params);
    await announcements.dismiss(grantedSession(request), announcementId);
    return reply.status(204).send();
  });
}
