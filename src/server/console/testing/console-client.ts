// A console viewer for tests and the bench, speaking the browser's protocol over a real websocket:
// output goes into a headless xterm.js (as in the browser) and is acknowledged once written.
import headlessPackage from "@xterm/headless";
import WebSocket from "ws";
import { csrfHeader } from "../../../common/api.ts";
import { patient } from "../../../common/testing/patience.ts";
import {
  consoleAckBytes,
  ConsoleServerMessage,
  type ConsoleClientMessage,
} from "../../../common/console-protocol.ts";
import {
  opened,
  openBrowserSocket,
  refusedUpgradeStatus,
  type BrowserSocketOptions,
} from "../../testing/browser-socket.ts";

const { Terminal } = headlessPackage;
const emptyWrite = new Uint8Array(0);
/** Numbers the markers of `run`, unique across clients that may share one screen. */
let commandsRun = 0;

export interface ConsoleClientOptions extends BrowserSocketOptions {
  mode?: "observe";
  /** One of the lab's terminals instead of the serial console. */
  terminal?: number;
  /** Acknowledge output once written, as the SPA does; false plays a browser that stopped reading. */
  ack?: boolean;
}

/** Signs in through the API and returns the cookie a browser would keep. */
export async function signInCookie(baseUrl: string, username: string, password = "demo"): Promise<string> {
  const response = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", [csrfHeader.name]: csrfHeader.value },
    body: JSON.stringify({ username, password }),
  });
  const cookie = response.headers
    .getSetCookie()
    .find((line) => line.startsWith("lab_sign_in="))
    ?.split(";")[0];
  if (response.status !== 200 || !cookie)
    throw new Error(`sign-in as ${username} failed: ${response.status}`);
  return cookie;
}

function socketFor(baseUrl: string, sessionId: string, options: ConsoleClientOptions): WebSocket {
  const query = options.mode ? `?mode=${options.mode}` : "";
  const which = options.terminal === undefined ? "console" : `terminals/${options.terminal}`;
  return openBrowserSocket(
    baseUrl,
    `/api/sessions/${encodeURIComponent(sessionId)}/${which}${query}`,
    options,
  );
}

/** The HTTP status with which the BFF refused the upgrade (fails if it accepted). */
export function refusedStatus(
  baseUrl: string,
  sessionId: string,
  options: ConsoleClientOptions,
): Promise<number> {
  return refusedUpgradeStatus(socketFor(baseUrl, sessionId, options));
}

export class ConsoleTestClient {
  readonly messages: ConsoleServerMessage[] = [];
  /** Bytes of output received (replay included). */
  received = 0;
  closedWith: { code: number; reason: string } | undefined;
  private readonly terminal = new Terminal({ cols: 80, rows: 24, scrollback: 5000, allowProposedApi: true });
  private readonly checks = new Set<() => void>();
  private unacked = 0;
  /** Writes handed to the terminal and not parsed yet. */
  private writing = 0;

  private constructor(
    private readonly socket: WebSocket,
    private ack: boolean,
  ) {
    socket.on("message", (data: Buffer, isBinary) => {
      if (isBinary) this.output(data);
      else this.control(data.toString("utf8"));
    });
    socket.on("close", (code, reason) => {
      this.terminal.write(emptyWrite, () => {
        this.closedWith = { code, reason: reason.toString() };
        this.recheck();
      });
    });
    socket.on("error", () => {});
  }

  static async connect(
    baseUrl: string,
    sessionId: string,
    options: ConsoleClientOptions,
  ): Promise<ConsoleTestClient> {
    const socket = socketFor(baseUrl, sessionId, options);
    const client = new ConsoleTestClient(socket, options.ack ?? true);
    await opened(socket, `the console of ${sessionId}`);
    return client;
  }

  /** Everything in the terminal, scrollback included, one line per row. */
  screen(): string {
    const buffer = this.terminal.buffer.active;
    const lines: string[] = [];
    for (let row = 0; row < buffer.length; row += 1) {
      lines.push(buffer.getLine(row)?.translateToString(true) ?? "");
    }
    return lines.join("\n");
  }

  /** How many rows of the terminal contain `text`. */
  rowsContaining(text: string): number {
    return this.screen()
      .split("\n")
      .filter((line) => line.includes(text)).length;
  }

  lastMessage<T extends ConsoleServerMessage["type"]>(
    type: T,
  ): Extract<ConsoleServerMessage, { type: T }> | undefined {
    return this.messages.findLast((message) => message.type === type) as
      Extract<ConsoleServerMessage, { type: T }> | undefined;
  }

  type(text: string | Buffer): void {
    this.socket.send(typeof text === "string" ? Buffer.from(text, "utf8") : text, { binary: true });
  }

  send(message: ConsoleClientMessage): void {
    this.sendText(JSON.stringify(message));
  }

  /** A text frame as it is, protocol or not. */
  sendText(text: string): void {
    this.socket.send(text);
  }

  /** Resolves once `condition` holds (re-checked whenever something arrives), or fails after the deadline. */
  until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.checks.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.checks.delete(check);
        const tail = this.screen().split("\n").filter(Boolean).slice(-8).join("\n");
        reject(new Error(`timed out waiting for ${what}; screen ends with:\n${tail}`));
      }, patient(timeoutMs));
      this.checks.add(check);
    });
  }

  /** Resolves once the replay arrived and the VM's console is connected: keystrokes reach the guest. */
  untilLive(timeoutMs = 20_000): Promise<void> {
    return this.until(
      () => this.lastMessage("replay-end") !== undefined && this.lastMessage("status")?.state === "connected",
      "the replay and a connected console",
      timeoutMs,
    );
  }

  /**
   * Types `command` at the shell and gives back what it printed, found between two markers that are
   * typed split in quotes, so that the echo of the typed line never matches them.
   */
  async run(command: string, timeoutMs = 120_000): Promise<string> {
    const id = ++commandsRun;
    this.type(`echo "<<"'sta''rt-${id}>>'; ${command}; echo "<<"'do''ne-${id}>>'\r`);
    await this.untilScreenShows(`<<done-${id}>>`, timeoutMs);
    const screen = this.screen();
    const start = screen.lastIndexOf(`<<start-${id}>>`) + `<<start-${id}>>`.length;
    return screen.slice(start, screen.lastIndexOf(`<<done-${id}>>`)).trim();
  }

  untilScreenShows(text: string, timeoutMs?: number): Promise<void> {
    return this.until(() => this.screen().includes(text), JSON.stringify(text), timeoutMs);
  }

  untilClosed(timeoutMs?: number): Promise<{ code: number; reason: string }> {
    return this.until(() => this.closedWith !== undefined, "the socket to close", timeoutMs).then(
      () => this.closedWith!,
    );
  }

  /** Acknowledge from now on, including what was written so far. */
  startAcking(): void {
    this.ack = true;
    if (this.unacked > 0) {
      this.send({ type: "ack", bytes: this.unacked });
      this.unacked = 0;
    }
  }

  close(): void {
    this.socket.close();
    this.terminal.dispose();
  }

  private output(bytes: Buffer): void {
    this.received += bytes.length;
    this.writing += 1;
    this.terminal.write(bytes, () => {
      this.writing -= 1;
      this.unacked += bytes.length;
      if (this.ack && (this.unacked >= consoleAckBytes || this.writing === 0)) {
        this.send({ type: "ack", bytes: this.unacked });
        this.unacked = 0;
      }
      this.recheck();
    });
  }

  // Recorded in the terminal's write order: a message counts as seen once the output before it is
  // on the screen, so "replay-end seen" means the replay is there to read.
  private control(text: string): void {
    const parsed = ConsoleServerMessage.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`the BFF sent a control message outside the protocol: ${text}`);
    this.terminal.write(emptyWrite, () => {
      this.messages.push(parsed.data);
      this.recheck();
    });
  }

  private recheck(): void {
    for (const check of [...this.checks]) check();
  }
}
