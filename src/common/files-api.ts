// Files in and out of a session's home through its VM's agent (docs/files.md): the limits the SPA,
// the BFF and the agent (src/agent/lab_agent/) all hold, and the answers of the files routes.
import * as z from "zod/mini";

export const fileLimits = {
  /** The largest file that is uploaded or downloaded; the agent refuses larger ones too. */
  maxBytes: 32 * 1024 * 1024,
  /** A path relative to the student's home, at most this long. */
  pathLength: 1024,
} as const;

/** The agent version that first moved files (GET /v1/health reports its own). */
export const filesAgentVersion = "2.1.0";

/**
 * The codes a files route may answer with besides the general ones, each also its reason
 * (error-reasons.ts): what is wrong with the file or the VM, not with the request.
 */
export const fileErrorCodes = [
  "invalid_path",
  "outside_home",
  "no_such_file",
  "no_such_folder",
  "not_a_file",
  "permission_denied",
  "too_large",
  "disk_full",
  "agent_too_old",
  "agent_unreachable",
  "transfer_failed",
] as const;
export type FileErrorCode = (typeof fileErrorCodes)[number];

/** PUT /api/sessions/:id/files?path=P answers with where the file went and its size. */
export const UploadedFile = z.object({ path: z.string(), bytes: z.number() });
export type UploadedFile = z.output<typeof UploadedFile>;
