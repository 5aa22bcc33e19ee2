// Where a session's console websocket lives: same host as the page, so the session cookie goes along.

export function consoleUrl(
  sessionId: string,
  observe: boolean,
  location: Location = window.location,
): string {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const query = observe ? "?mode=observe" : "";
  return `${scheme}//${location.host}/api/sessions/${encodeURIComponent(sessionId)}/console${query}`;
}
