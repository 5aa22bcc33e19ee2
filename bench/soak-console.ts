// One student's console in the soak, through the BFF as the SPA connects (cookie, Origin, acks). The
// guest prints numbered lines at a steady pace while the student types; every byte that arrives is
// accounted for: numbered lines in order, or the echo of what was typed. A gap is lost output, a
// number going back is reordered (or replayed twice) output, anything else is corruption.
import WebSocket from "ws";
import { consoleAckBytes, ConsoleServerMessage } from "../src/common/console-protocol.ts";
import { opened, openBrowserSocket } from "../src/server/testing/browser-socket.ts";

export interface ConsoleFigures {
  sessionId: string;
  /** Output bytes received, replay included. */
  bytes: number;
  /** Numbered lines received in order. */
  lines: number;
  /** Numbered lines missing between the first and the last received. */
  lost: number;
  /** Lines whose number was not above the one before. */
  reordered: number;
  /** Bytes that were neither a numbered line nor an echo. */
  unexpected: number;
  echoMs: number[];
  echoTimeouts: number;
}

const tickLine = /^tick-(\d{8})$/;
/** What typing "x" and backspace echo at a bash prompt: the letter, and "\b" + erase-to-end-of-line. */
// eslint-disable-next-line no-control-regex -- terminal output is made of control characters
const echoArtifacts = /\x1b\[[0-9;?]*[A-Za-z]|[x\x08\x07]/g;
const echoTimeoutMs = 5_000;

export class SoakConsole {
  readonly figures: ConsoleFigures;
  private readonly messages: ConsoleServerMessage[] = [];
  private readonly waiters = new Set<() => void>();
  private pending = "";
  private expected: number | undefined;
  private unacked = 0;
  private ackScheduled = false;
  private echoWaiter: ((chunk: string) => void) | undefined;

  private constructor(
    private readonly socket: WebSocket,
    sessionId: string,
  ) {
    this.figures = {
      sessionId,
      bytes: 0,
      lines: 0,
      lost: 0,
      reordered: 0,
      unexpected: 0,
      echoMs: [],
      echoTimeouts: 0,
    };
    socket.on("message", (data: Buffer, isBinary) => {
      if (isBinary) this.output(data);
      else {
        this.messages.push(ConsoleServerMessage.parse(JSON.parse(data.toString("utf8"))));
        for (const check of [...this.waiters]) check();
      }
    });
  }

  static async open(baseUrl: string, cookie: string, sessionId: string): Promise<SoakConsole> {
    const socket = openBrowserSocket(baseUrl, `/api/sessions/${sessionId}/console`, { cookie });
    const viewer = new SoakConsole(socket, sessionId);
    await opened(socket, `the console of ${sessionId}`);
    await viewer.until((message) => message.type === "replay-end");
    await viewer.until((message) => message.type === "status" && message.state === "connected");
    return viewer;
  }

  /** Starts the guest's numbered output, one line every `tickMs`, without a process per line. */
  async startOutput(tickMs: number): Promise<void> {
    const seconds = (tickMs / 1000).toFixed(3);
    // fd 9 never delivers anything, so `read -t` is a sleep inside bash. The first line waits a
    // moment, so the job notice and the next prompt come before it.
    this.type(
      `exec 9< <(sleep 1000000); (read -t 1 -u 9; i=0; while :; do i=$((i+1)); printf 'tick-%08d\\n' $i; read -t ${seconds} -u 9; done) &\r`,
    );
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(
        () => reject(new Error(`no output from ${this.figures.sessionId}`)),
        15_000,
      );
      const check = () => {
        if (this.expected === undefined) return;
        clearTimeout(deadline);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  /** Types one key after another (a letter, then backspace) until `endAt`, timing each echo. */
  async typeUntil(endAt: number, intervalMs: number): Promise<void> {
    let letter = true;
    while (performance.now() < endAt) {
      const started = performance.now();
      const echoed = await this.keystroke(letter ? "x" : "\x7f", letter ? "x" : "\b");
      if (echoed) this.figures.echoMs.push(performance.now() - started);
      else this.figures.echoTimeouts += 1;
      letter = !letter;
      await new Promise((resolve) => setTimeout(resolve, intervalMs * (0.5 + Math.random())));
    }
  }

  close(): void {
    this.socket.close();
  }

  private keystroke(key: string, echo: string): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.echoWaiter = undefined;
        resolve(false);
      }, echoTimeoutMs);
      this.echoWaiter = (chunk) => {
        if (!chunk.includes(echo)) return;
        clearTimeout(timer);
        this.echoWaiter = undefined;
        resolve(true);
      };
      this.type(key);
    });
  }

  private type(text: string): void {
    this.socket.send(Buffer.from(text, "utf8"), { binary: true });
  }

  private until(accept: (message: ConsoleServerMessage) => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const ended = this.messages.find((message) => message.type === "ended");
        if (ended)
          reject(new Error(`the console of ${this.figures.sessionId} ended: ${JSON.stringify(ended)}`));
        else if (!this.messages.some(accept)) return;
        else resolve();
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  private output(data: Buffer): void {
    this.figures.bytes += data.length;
    const text = data.toString("latin1");
    this.echoWaiter?.(text);
    this.account(text);
    for (const check of [...this.waiters]) check();
    // Acknowledged once "written", as the SPA does: at 32 KiB, or when nothing more is waiting.
    this.unacked += data.length;
    if (this.unacked >= consoleAckBytes) this.ack();
    else if (!this.ackScheduled) {
      this.ackScheduled = true;
      setImmediate(() => this.ack());
    }
  }

  private ack(): void {
    this.ackScheduled = false;
    if (this.unacked === 0 || this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(JSON.stringify({ type: "ack", bytes: this.unacked }));
    this.unacked = 0;
  }

  /** Checks every complete line; the echo of typing may land anywhere, even inside a line. */
  private account(text: string): void {
    this.pending += text;
    const end = this.pending.lastIndexOf("\n");
    if (end < 0) return;
    const complete = this.pending.slice(0, end + 1);
    this.pending = this.pending.slice(end + 1);
    const lines = complete.split("\n").slice(0, -1);
    for (const raw of lines) {
      const line = raw.replace(echoArtifacts, "").replace(/\r$/, "");
      const number = tickLine.exec(line)?.[1];
      if (this.expected === undefined) {
        // Before the first numbered line: the prompt, the command's own echo, the job notice.
        if (number !== undefined) this.expected = Number(number) + 1;
        if (number !== undefined) this.figures.lines += 1;
        continue;
      }
      if (number === undefined) {
        this.figures.unexpected += raw.length + 1;
        continue;
      }
      const value = Number(number);
      if (value < this.expected) this.figures.reordered += 1;
      else {
        this.figures.lost += value - this.expected;
        this.figures.lines += 1;
        this.expected = value + 1;
      }
    }
  }
}
