// Console recordings: download one and list them, as the sessions they come from (access/sections.ts):
// students their own, TAs those of their sections, instructors any (or one student's). The session
// may be gone, so the access rule is "signed in", and which recordings a person sees comes from each
// recording's own header (owner and section), as a list shows each person their own rows.
import type { FastifyInstance } from "fastify";
import * as z from "zod/mini";
import { recordingIdOf, RecordingListQuery, type Me, type RecordingList } from "../../common/api.ts";
import { graphicalConsole, serialConsole } from "../../common/console-protocol.ts";
import { labIdPattern } from "../../common/lab.ts";
import { signedInUser } from "../access/policy.ts";
import { maySeeSession } from "../access/sections.ts";
import { DomainError } from "../errors/domain-error.ts";
import { parseOrThrow } from "../http/errors.ts";
import { SessionIdParams, TerminalNumber } from "../http/params.ts";
import type { StoredRecording } from "./recording-storage.ts";
import { RecordingBusyError, type RecordingStore } from "./recording-store.ts";

/**
 * `?terminal=N` for a lab terminal's recording, `?terminal=-1` for the VM screen's (console-protocol.ts
 * numbers a session's consoles so); the serial console's without it.
 */
const RecordingQuery = z.object({
  terminal: z._default(
    z.union([
      z.pipe(
        z.literal(String(graphicalConsole)),
        z.transform(() => graphicalConsole),
      ),
      TerminalNumber,
    ]),
    serialConsole,
  ),
});

const ListQuery = z.extend(RecordingListQuery, {
  lab: RecordingListQuery.shape.lab.check(
    z.refine((lab) => lab === undefined || labIdPattern.test(lab), "not a lab id"),
  ),
});

export function registerRecordingRoutes(
  app: FastifyInstance,
  { recordings }: { recordings: RecordingStore },
): void {
  const signedIn = { config: { access: "signed-in" } } as const;

  app.get("/api/sessions/:id/recording", signedIn, async (request, reply) => {
    const user = signedInUser(request);
    const { id } = parseOrThrow(SessionIdParams, request.params);
    const { terminal } = parseOrThrow(RecordingQuery, request.query);
    // 404 alike for "none" and "not yours", as the sessions API answers. The length is the
    // recording's as it was read: it may grow while it is sent, and only whole lines are promised.
    const found = await recordings
      .download(id, terminal, (recording) => maySee(user, recording))
      .catch((error: unknown) => {
        throw busyAsUnavailable(error);
      });
    if (!found) {
      throw new DomainError("not_found", "recording_not_found", `Session ${id} has no console recording.`, {
        id,
      });
    }
    // A screen recording is JSON lines of its own (docs/vnc.md), no asciicast player's to open.
    const screen = terminal === graphicalConsole;
    const fileName = `${recordingIdOf(id, terminal)}${screen ? ".jsonl" : ".cast"}`;
    return reply
      .header("content-type", screen ? "application/x-ndjson" : "application/x-asciicast")
      .header("content-disposition", `attachment; filename="${fileName}"`)
      .header("content-length", found.recording.bytes)
      .header("cache-control", "no-store")
      .send(found.body);
  });

  app.get("/api/recordings", signedIn, async (request): Promise<RecordingList> => {
    const user = signedInUser(request);
    const { lab, student } = parseOrThrow(ListQuery, request.query);
    // A student's list is their own whatever `student` asks for.
    const owner = user.role === "student" ? user.username : student;
    const items = await recordings
      .list({ labId: lab, owner }, (recording) => maySee(user, recording))
      .catch((error: unknown) => {
        throw busyAsUnavailable(error);
      });
    return { items };
  });
}

function maySee(user: Me, recording: StoredRecording): boolean {
  const { owner, section } = recording.header.lab_console;
  return maySeeSession(user, { owner, section: section ?? null });
}

function busyAsUnavailable(error: unknown): unknown {
  return error instanceof RecordingBusyError
    ? new DomainError("unavailable", "recording_busy", error.message)
    : error;
}
