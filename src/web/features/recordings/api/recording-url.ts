import { recordingIdOf } from "../../../../common/api.ts";
import { serialConsole } from "../../../../common/console-protocol.ts";

/**
 * Where the BFF serves a session's recording file (asciicast v2, as an attachment), under /api: its
 * serial console's, or one of its terminals'.
 */
export function recordingPath(sessionId: string, terminal?: number): string {
  const query = terminal === undefined ? "" : `?terminal=${terminal}`;
  return `/sessions/${encodeURIComponent(sessionId)}/recording${query}`;
}

/** The same file for a download link, which the browser follows itself with the session cookie. */
export function recordingFileUrl(sessionId: string, terminal?: number): string {
  return `/api${recordingPath(sessionId, terminal)}`;
}

/** The file name a download is saved as (the BFF's Content-Disposition says the same). */
export function recordingFileName(sessionId: string, terminal?: number): string {
  return `${recordingIdOf(sessionId, terminal ?? serialConsole)}.cast`;
}
