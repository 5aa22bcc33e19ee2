// Where a session's screen websocket lives, as a path and query: ReconnectingSocket opens it on the
// page's own host, so the session cookie goes along (the same checks as the console's, docs/console.md).

export function screenUrl(sessionId: string, observe: boolean): string {
  return `/api/sessions/${encodeURIComponent(sessionId)}/vnc${observe ? "?mode=observe" : ""}`;
}
