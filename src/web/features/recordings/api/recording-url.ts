import { recordingIdOf } from "../../../../common/api.ts";
import { graphicalConsole, serialConsole } from "../../../../common/console-protocol.ts";

/**
 * Where the BFF serves a session's recording file (as an attachment), under /api: its serial
 * console's or one of its terminals' (asciicast v2), or its screen's (`graphicalConsole`, JSON lines
 * of PNGs, docs/vnc.md).
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
  const extension = terminal === graphicalConsole ? "jsonl" : "cast";
  return `${recordingIdOf(sessionId, terminal ?? serialConsole)}.${extension}`;
}
