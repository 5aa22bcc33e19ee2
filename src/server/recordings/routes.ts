// Console recordings: download one and list them, TAs and instructors any (or one student's), students
// their own. The session may be gone, so who may see a recording comes from the recording's own header.
import { createReadStream } from "node:fs";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { RecordingListQuery, type Me, type RecordingList } from "../../common/api.ts";
import { labIdPattern } from "../../common/lab.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { requireUser } from "../auth/current-user.ts";
import { notFound, parseOrThrow } from "../http/errors.ts";
import type { RecordingStore } from "./recording-store.ts";

const RecordingParams = z.object({
  id: z
    .string()
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "a session id has only lower-case letters, digits and '-'"),
});

const ListQuery = RecordingListQuery.extend({
  lab: RecordingListQuery.shape.lab.refine(
    (lab) => lab === undefined || labIdPattern.test(lab),
    "not a lab id",
  ),
});

export function registerRecordingRoutes(
  app: FastifyInstance,
  { recordings, loginSessions }: { recordings: RecordingStore; loginSessions: LoginSessions },
): void {
  app.get("/api/sessions/:id/recording", async (request, reply) => {
    const user = requireUser(request, loginSessions);
    const { id } = parseOrThrow(RecordingParams, request.params);
    const found = await recordings.find(id);
    // 404 alike for "none" and "not yours", as the sessions API answers.
    if (!found || !maySee(user, found.header.lab_console.owner)) {
      throw notFound(`Session ${id} has no console recording.`);
    }
    // The length as of now: the file may grow while it is sent, and only whole lines are promised.
    return reply
      .header("content-type", "application/x-asciicast")
      .header("content-disposition", `attachment; filename="${id}.cast"`)
      .header("content-length", found.bytes)
      .header("cache-control", "no-store")
      .send(createReadStream(found.file, { start: 0, end: Math.max(0, found.bytes - 1) }));
  });

  app.get("/api/recordings", async (request): Promise<RecordingList> => {
    const user = requireUser(request, loginSessions);
    const { lab, student } = parseOrThrow(ListQuery, request.query);
    // A student's list is their own whatever `student` asks for.
    const owner = user.role === "student" ? user.username : student;
    return { items: await recordings.list({ labId: lab, owner }) };
  });
}

function maySee(user: Me, owner: string): boolean {
  return user.role !== "student" || user.username === owner;
}
