// Console recordings: download one and list them, TAs and instructors any (or one student's), students
// their own. The session may be gone, so who may see a recording comes from the recording's own header.
import type { FastifyInstance } from "fastify";
import * as z from "zod/mini";
import { RecordingListQuery, type Me, type RecordingList } from "../../common/api.ts";
import { labIdPattern } from "../../common/lab.ts";
import type { LoginSessions } from "../auth/login-sessions.ts";
import { requireUser } from "../auth/current-user.ts";
import { HttpError, notFound, parseOrThrow } from "../http/errors.ts";
import { RecordingBusyError, type RecordingStore } from "./recording-store.ts";

const RecordingParams = z.object({
  id: z
    .string()
    .check(
      z.maxLength(63),
      z.regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "a session id has only lower-case letters, digits and '-'"),
    ),
});

const ListQuery = z.extend(RecordingListQuery, {
  lab: RecordingListQuery.shape.lab.check(
    z.refine((lab) => lab === undefined || labIdPattern.test(lab), "not a lab id"),
  ),
});

export function registerRecordingRoutes(
  app: FastifyInstance,
  { recordings, loginSessions }: { recordings: RecordingStore; loginSessions: LoginSessions },
): void {
  app.get("/api/sessions/:id/recording", async (request, reply) => {
    const user = requireUser(request, loginSessions);
    const { id } = parseOrThrow(RecordingParams, request.params);
    // 404 alike for "none" and "not yours", as the sessions API answers. The length is the
    // recording's as it was read: it may grow while it is sent, and only whole lines are promised.
    const found = await recordings
      .download(id, (recording) => maySee(user, recording.header.lab_console.owner))
      .catch((error: unknown) => {
        throw toHttpError(error);
      });
    if (!found) throw notFound(`Session ${id} has no console recording.`);
    return reply
      .header("content-type", "application/x-asciicast")
      .header("content-disposition", `attachment; filename="${id}.cast"`)
      .header("content-length", found.recording.bytes)
      .header("cache-control", "no-store")
      .send(found.body);
  });

  app.get("/api/recordings", async (request): Promise<RecordingList> => {
    const user = requireUser(request, loginSessions);
    const { lab, student } = parseOrThrow(ListQuery, request.query);
    // A student's list is their own whatever `student` asks for.
    const owner = user.role === "student" ? user.username : student;
    const items = await recordings.list({ labId: lab, owner }).catch((error: unknown) => {
      throw toHttpError(error);
    });
    return { items };
  });
}

function maySee(user: Me, owner: string): boolean {
  return user.role !== "student" || user.username === owner;
}

function toHttpError(error: unknown): unknown {
  return error instanceof RecordingBusyError ? new HttpError(503, "recording_busy", error.message) : error;
}
