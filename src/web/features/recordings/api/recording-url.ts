/** Where the BFF serves a session's recording file (asciicast v2, as an attachment), under /api. */
export function recordingPath(sessionId: string): string {
  return `/sessions/${encodeURIComponent(sessionId)}/recording`;
}

/** The same file for a download link, which the browser follows itself with the session cookie. */
export function recordingFileUrl(sessionId: string): string {
  return `/api${recordingPath(sessionId)}`;
}
