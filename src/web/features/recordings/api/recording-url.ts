/** Where the BFF serves a session's recording file (asciicast v2, as an attachment). */
export function recordingFileUrl(sessionId: string): string {
  return `/api/sessions/${encodeURIComponent(sessionId)}/recording`;
}
