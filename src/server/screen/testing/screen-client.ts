// A screen viewer for tests and the bench, speaking the browser's protocol over a real websocket:
// RFB through the BFF's own client (as noVNC would, asking for every change as it comes) and the
// JSON messages beside it. Its framebuffer is what a browser's canvas would show.
import WebSocket from "ws";
import { waitFor } from "../../../common/testing/patience.ts";
import { ScreenServerMessage, type ScreenClientMessage } from "../../../common/screen-protocol.ts";
import { screenText } from "../../../emulator/testing/screen-text.ts";
import {
  opened,
  openBrowserSocket,
  refusedUpgradeStatus,
  type BrowserSocketOptions,
} from "../../testing/browser-socket.ts";
import { RfbClient } from "../rfb-client.ts";

const textColumns = 80;

export interface ScreenClientOptions extends BrowserSocketOptions {
  mode?: "observe";
}

function socketFor(baseUrl: string, sessionId: string, options: ScreenClientOptions): WebSocket {
  const query = options.mode ? `?mode=${options.mode}` : "";
  return openBrowserSocket(baseUrl, `/api/sessions/${encodeURIComponent(sessionId)}/vnc${query}`, options);
}

/** The HTTP status with which the BFF refused the upgrade (fails if it accepted). */
export function refusedScreenStatus(
  baseUrl: string,
  sessionId: string,
  options: ScreenClientOptions,
): Promise<number> {
  return refusedUpgradeStatus(socketFor(baseUrl, sessionId, options));
}

export class ScreenTestClient {
  readonly rfb: RfbClient;
  readonly messages: ScreenServerMessage[] = [];
  updates = 0;
  bytesReceived = 0;
  private failure: string | undefined;

  private constructor(readonly socket: WebSocket) {
    this.rfb = new RfbClient((bytes) => socket.send(bytes, { binary: true }), {
      updated: () => {
        this.updates += 1;
        this.rfb.requestUpdate(true);
      },
      failed: (reason) => (this.failure = reason),
    });
    socket.on("message", (data, isBinary) => {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
      if (isBinary) {
        this.bytesReceived += bytes.length;
        this.rfb.receive(bytes);
        return;
      }
      const parsed = ScreenServerMessage.safeParse(JSON.parse(bytes.toString("utf8")));
      if (parsed.success) this.messages.push(parsed.data);
    });
  }

  static async connect(
    baseUrl: string,
    sessionId: string,
    options: ScreenClientOptions,
  ): Promise<ScreenTestClient> {
    const socket = socketFor(baseUrl, sessionId, options);
    const client = new ScreenTestClient(socket);
    await opened(socket, `the screen of ${sessionId}`);
    return client;
  }

  /** The screen's text (a VGA text-mode screen), read from the pixels; a full row runs on into the next. */
  text(): string {
    return screenText(this.rfb.framebuffer)
      .map((row) => (row.length === textColumns ? row : `${row}\n`))
      .join("");
  }

  lastMessage<T extends ScreenServerMessage["type"]>(
    type: T,
  ): Extract<ScreenServerMessage, { type: T }> | undefined {
    return this.messages.findLast((message) => message.type === type) as
      Extract<ScreenServerMessage, { type: T }> | undefined;
  }

  /** Presses and releases each character's key (printable ASCII; "\r" is Return). */
  type(text: string): void {
    for (const character of text) {
      const keysym = character === "\r" ? 0xff0d : character.charCodeAt(0);
      this.rfb.key(keysym, true);
      this.rfb.key(keysym, false);
    }
  }

  send(message: ScreenClientMessage): void {
    this.socket.send(JSON.stringify(message));
  }

  until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    return waitFor(
      () => {
        if (this.failure) throw new Error(`RFB failed: ${this.failure}`);
        return condition();
      },
      what,
      timeoutMs,
    );
  }

  untilScreenShows(text: string, timeoutMs = 10_000): Promise<void> {
    return this.until(
      () => this.text().includes(text),
      `the screen to show ${JSON.stringify(text)}`,
      timeoutMs,
    );
  }

  close(): void {
    this.socket.close();
  }
}
