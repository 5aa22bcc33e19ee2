// QMP and the guest agent's protocol are both JSON objects on a unix socket, one per line in
// practice: this splits a socket's bytes into them.
import type net from "node:net";

export function onJsonLines(socket: net.Socket, handle: (message: Record<string, unknown>) => void): void {
  let pending = "";
  socket.setEncoding("utf8");
  socket.on("data", (text: string) => {
    pending += text;
    let end;
    while ((end = pending.indexOf("\n")) !== -1) {
      const line = pending.slice(0, end).trim();
      pending = pending.slice(end + 1);
      // The agent's sync answers may be preceded by 0xFF, which the delimiter asks it to send.
      const start = line.indexOf("{");
      if (start === -1) continue;
      try {
        handle(JSON.parse(line.slice(start)) as Record<string, unknown>);
      } catch {
        // Not JSON: left over from a reply cut off by a restart of the agent.
      }
    }
  });
}
