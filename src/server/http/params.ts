// The path parameters routes share, checked before anything reaches the cluster or a store: a
// session id is a VM's name (an RFC 1123 label), a lab id a lab file's, a run id one we made.
import * as z from "zod/mini";
import { labIdPattern, maxTerminals } from "../../common/lab.ts";

export const SessionIdParams = z.object({
  id: z
    .string()
    .check(
      z.maxLength(63, "a session id has at most 63 characters"),
      z.regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "a session id has only lower-case letters, digits and '-'"),
    ),
});

/** One of a lab's terminals, 1 up to the most a lab may offer (whether this lab does is the route's to say). */
export const TerminalNumber = z.coerce.number().check(z.int(), z.minimum(1), z.maximum(maxTerminals));

export const LabIdParams = z.object({
  labId: z.string().check(z.maxLength(40), z.regex(labIdPattern, "not a lab id")),
});

export const RunIdParams = z.object({
  runId: z.string().check(z.maxLength(100), z.regex(/^[A-Za-z0-9-]+$/, "not a grading run id")),
});
