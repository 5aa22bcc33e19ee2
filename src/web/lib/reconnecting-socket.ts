// One websocket to the BFF that comes back after a drop: the console and the class wall both need
// a socket that reopens with jittered backoff, knows when reopening cannot help, and never lets a
// late event of a socket it has given up on reach the one that replaced it. What the frames mean
// stays with the user of the class.
import { reconnectDelayMs } from "./reconnect-backoff.ts";

export type SocketStatus =
  /** No socket and none planned: not started, stopped, or closed with a code that ends for good. */
  | { kind: "closed"; code: number | null }
  /** The first socket since start() is opening. */
  | { kind: "connecting" }
  | { kind: "open" }
  /** The socket was lost; the next one opens at `retryAt` (and the status stays until it is open). */
  | { kind: "reconnecting"; retryAt: number };

export interface ReconnectRules {
  /** Close codes after which a new socket would be refused the same way. */
  finalCloseCodes?: readonly number[];
  /** Close codes that ask for a new socket straight away, without waiting. */
  immediateCloseCodes?: readonly number[];
}

export interface SocketHandlers {
  /** A frame of the current socket: text as a string, binary as an ArrayBuffer. */
  message(data: string | ArrayBuffer, generation: number): void;
  /** The current socket opened; nothing of it was received yet. */
  open?(): void;
  status?(status: SocketStatus): void;
}

/** A path on the page's own host (so the session cookie goes along), with ws: or wss: to match the page. */
export function socketUrl(path: string, page: Pick<Location, "protocol" | "host"> = window.location): string {
  const scheme = page.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${page.host}${path}`;
}

// A code of the range applications may use (4000-4999): the page itself gave up on the socket.
const droppedCloseCode = 4000;

export class ReconnectingSocket {
  private socket: WebSocket | undefined;
  /** Bumped per socket and on stop, so a socket's late events are recognised as stale. */
  private generation = 0;
  private failedAttempts = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** The server said it is done: the next close is final, whatever its code. */
  private finishing = false;
  private disposed = false;

  constructor(
    private readonly path: string,
    private readonly rules: ReconnectRules,
    private readonly handlers: SocketHandlers,
  ) {}

  get isOpen(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /** Whether `generation` (from `message`) is still the current socket's. */
  isCurrent(generation: number): boolean {
    return generation === this.generation;
  }

  /** Opens a socket unless one is open, opening or planned. */
  start(): void {
    if (this.disposed || this.socket || this.retryTimer !== undefined) return;
    this.finishing = false;
    this.report({ kind: "connecting" });
    this.connect();
  }

  /** Skips the wait before a planned reconnect. */
  reconnectNow(): void {
    if (this.retryTimer === undefined) return;
    clearTimeout(this.retryTimer);
    this.connect();
  }

  /** The connection proved good (the user decides what that means): the next drop retries quickly. */
  resetBackoff(): void {
    this.failedAttempts = 0;
  }

  /** The server ended the conversation: the socket stays for what it still sends, and is not replaced. */
  finish(): void {
    this.finishing = true;
  }

  /** Sends on the current socket if it is open; says whether it did. */
  send(data: string | Uint8Array<ArrayBuffer>): boolean {
    if (!this.socket || !this.isOpen) return false;
    this.socket.send(data);
    return true;
  }

  /**
   * Closes the current socket as if its line had dropped: the usual reconnect follows its close. For
   * a reader that cannot go on with what the socket sent (noVNC after a protocol error).
   */
  drop(reason = ""): void {
    this.socket?.close(droppedCloseCode, reason);
  }

  /** Closes the socket and plans no other; start() opens a new one. */
  stop(reason = ""): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.generation += 1;
    const socket = this.socket;
    this.socket = undefined;
    socket?.close(1000, reason);
    this.report({ kind: "closed", code: null });
  }

  dispose(reason = ""): void {
    this.disposed = true;
    this.stop(reason);
  }

  private connect(): void {
    this.retryTimer = undefined;
    const generation = ++this.generation;
    const socket = new WebSocket(socketUrl(this.path));
    // Binary frames arrive as ArrayBuffers, readable at once (a Blob would need an async read).
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    socket.onopen = () => {
      if (!this.isCurrent(generation)) return;
      this.report({ kind: "open" });
      this.handlers.open?.();
    };
    socket.onmessage = (event: MessageEvent<string | ArrayBuffer>) => {
      if (this.isCurrent(generation)) this.handlers.message(event.data, generation);
    };
    socket.onclose = (event) => {
      if (!this.isCurrent(generation)) return;
      this.socket = undefined;
      this.afterClose(event.code);
    };
  }

  private afterClose(code: number): void {
    if (this.finishing || this.rules.finalCloseCodes?.includes(code)) {
      this.report({ kind: "closed", code });
      return;
    }
    const delay = this.rules.immediateCloseCodes?.includes(code) ? 0 : reconnectDelayMs(this.failedAttempts);
    this.failedAttempts += 1;
    this.report({ kind: "reconnecting", retryAt: Date.now() + delay });
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  private report(status: SocketStatus): void {
    if (!this.disposed) this.handlers.status?.(status);
  }
}
