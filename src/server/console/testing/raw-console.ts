// A browser's console socket for tests that compare bytes (a recording against what the browser
// received): it keeps every output byte exactly as it arrived, the replays apart from the live output,
// and acknowledges each frame at once, as the SPA does once its terminal wrote it, so the BFF never
// holds it back or catches it up.
import type { ConsoleClientMessage } from "../../../common/console-protocol.ts";
import { eventually } from "../../../common/testing/patience.ts";
import { opened, openBrowserSocket } from "../../testing/browser-socket.ts";

export interface RawConsole {
  type(text: string): void;
  /** The output after the last replay ended, as received. */
  live(): Buffer;
  /** The replays' output (the first screen, and any catch-up). */
  replay(): Buffer;
  /** How many replays began: more than one means the BFF caught this console up. */
  replays(): number;
  close(): void;
}

/** Resolves once the first replay is over and the console is connected to the VM. */
export async function openRawConsole(
  baseUrl: string,
  sessionId: string,
  cookie: string,
): Promise<RawConsole> {
  const socket = openBrowserSocket(baseUrl, `/api/sessions/${sessionId}/console`, { cookie });
  const live: Buffer[] = [];
  const replay: Buffer[] = [];
  let replays = 0;
  let replayDone = false;
  let connected = false;
  const send = (message: ConsoleClientMessage) => socket.send(JSON.stringify(message));
  socket.on("message", (data: Buffer, isBinary) => {
    if (isBinary) {
      (replayDone ? live : replay).push(Buffer.from(data));
      send({ type: "ack", bytes: data.length });
      return;
    }
    const message = JSON.parse(data.toString("utf8")) as { type: string; state?: string };
    if (message.type === "replay-begin") {
      replays += 1;
      replayDone = false;
    }
    if (message.type === "replay-end") replayDone = true;
    if (message.type === "status") connected = message.state === "connected";
  });
  await opened(socket, `the console of ${sessionId}`);
  await eventually(
    async () => replayDone && connected,
    (ready) => ready,
    { what: "the replay and a connected console", timeoutMs: 20_000 },
  );
  return {
    type: (text) => socket.send(Buffer.from(text, "utf8"), { binary: true }),
    live: () => Buffer.concat(live),
    replay: () => Buffer.concat(replay),
    replays: () => replays,
    close: () => socket.close(),
  };
}
