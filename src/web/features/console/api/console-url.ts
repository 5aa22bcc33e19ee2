// Where a session's console websocket lives, as a path and query: ReconnectingSocket opens it on the
// page's own host, so the session cookie goes along. `terminal`: one of the lab's terminals instead
// of the serial console.

export function consoleUrl(sessionId: string, observe: boolean, terminal?: number): string {
  const query = observe ? "?mode=observe" : "";
  const which = terminal === undefined ? "console" : `terminals/${terminal}`;
  return `/api/sessions/${encodeURIComponent(sessionId)}/${which}${query}`;
}
