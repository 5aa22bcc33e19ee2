// A stand-in for the browser's WebSocket in unit tests, with just what the SPA's socket code uses.
// The test plays the server: it opens, sends frames to and closes each socket by hand, so every
// order of events (a late close of a replaced socket, say) can be played on purpose.
import { vi } from "vitest";

export class FakeWebSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;

  /** Every socket created since install, oldest first. */
  static created: FakeWebSocket[] = [];

  readonly url: string;
  binaryType: BinaryType = "blob";
  readyState = FakeWebSocket.CONNECTING;
  /** What the page sent, in order. */
  readonly sent: (string | Uint8Array)[] = [];
  /** How the page closed it, if it did. */
  closedWith: { code: number | undefined; reason: string | undefined } | undefined;

  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;

  constructor(url: string) {
    this.url = url;
    FakeWebSocket.created.push(this);
  }

  send(data: string | Uint8Array): void {
    if (this.readyState !== FakeWebSocket.OPEN) throw new Error("send on a socket that is not open");
    // A copy: the page may reuse its buffer, and the test reads what went out at the time.
    this.sent.push(typeof data === "string" ? data : data.slice());
  }

  close(code?: number, reason?: string): void {
    this.closedWith = { code, reason };
    this.readyState = FakeWebSocket.CLOSING;
  }

  /** The server accepts the socket. */
  serverOpen(): void {
    this.readyState = FakeWebSocket.OPEN;
    this.onopen?.(new Event("open"));
  }

  /** A text frame (a string) or a binary frame (bytes) from the server. */
  serverSend(data: string | Uint8Array): void {
    const payload = typeof data === "string" ? data : data.slice().buffer;
    this.onmessage?.(new MessageEvent("message", { data: payload }));
  }

  /** The close event, whoever started the close; 1006 is a connection lost without a close frame. */
  serverClose(code = 1006, reason = ""): void {
    this.readyState = FakeWebSocket.CLOSED;
    this.onclose?.(closeEvent(code, reason));
  }

  /** The text frames the page sent, parsed. */
  sentJson(): unknown[] {
    return this.sent.filter((data) => typeof data === "string").map((data) => JSON.parse(data) as unknown);
  }

  /** The binary frames the page sent. */
  sentBinary(): Uint8Array[] {
    return this.sent.filter((data) => typeof data !== "string");
  }
}

/** Node has no CloseEvent; the code under test reads only these fields. */
function closeEvent(code: number, reason: string): CloseEvent {
  return Object.assign(new Event("close"), { code, reason, wasClean: code === 1000 }) as CloseEvent;
}

/** Replaces the global WebSocket (and the page's location, for socket URLs) until vi.unstubAllGlobals(). */
export function installFakeWebSocket(page: { protocol: string; host: string } = defaultPage): void {
  FakeWebSocket.created = [];
  vi.stubGlobal("WebSocket", FakeWebSocket);
  vi.stubGlobal("window", { location: page });
}

const defaultPage = { protocol: "http:", host: "lab.test" };

/** The newest socket; fails the test if there is none. */
export function latestSocket(): FakeWebSocket {
  const socket = FakeWebSocket.created.at(-1);
  if (!socket) throw new Error("no socket was opened");
  return socket;
}
