// Where a session's console websocket lives, as a path and query: ReconnectingSocket opens it on the
// page's own host, so the session cookie goes along.

export function consoleUrl(sessionId: string, observe: boolean): string {
  const query = observe ? "?mode=observe" : "";
  return `/api/sessions/${encodeURIComponent(sessionId)}/console${query}`;
}
