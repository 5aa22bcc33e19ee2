// The browser's end of a console websocket: connects, writes output into the terminal and
// acknowledges it once written (the BFF pauses the VM when we fall behind), sends keystrokes as
// binary frames, and reconnects (through ReconnectingSocket) until the BFF says the console has ended.
import {
  consoleAckBytes,
  consoleCloseCodes,
  ConsoleServerMessage,
  type ConsoleClientMessage,
  type GuestFitFailure,
  type ScreenBlankReason,
} from "../../../../common/console-protocol.ts";
import {
  statusFromUpstream,
  type ConnectionStatus,
  type KeyboardState,
} from "../../../lib/connection-status.ts";
import { ReconnectingSocket } from "../../../lib/reconnecting-socket.ts";
import { keyboardNews, type ConsoleViewers, type KeyboardNews } from "../../../lib/keyboard-news.ts";

export interface ConsoleState {
  status: ConnectionStatus;
  /** Unknown until the BFF says. */
  keyboard: KeyboardState | null;
  guestSize: { cols: number; rows: number } | null;
  /** The BFF's screen showed nothing, and why: until output arrives the page says what to press. */
  blankScreen: ScreenBlankReason | null;
  /** Everyone with the console open, and who holds the keyboard; unknown until the BFF says. */
  viewers: ConsoleViewers | null;
  /** The latest change of the keyboard to or from staff, for the live region. */
  keyboardNews: KeyboardNews | null;
  /** This window's last fit could not be applied (until the guest's size changes, or the next fit). */
  fitFailure: GuestFitFailure | null;
  /**
   * Keys typed while the console connects are held and sent once it is; past what the BFF holds they
   * were refused, and the page says so until the console is connected.
   */
  inputRefused: boolean;
}

/** The terminal as the connection needs it. */
export interface TerminalSink {
  /** `written` runs once the bytes are parsed into the screen. */
  write(bytes: Uint8Array, written: () => void): void;
  /** Empties the terminal once everything written so far is parsed (before a replay). */
  clear(): void;
  /** A line of our own between outputs: that output was lost while the connection was down. */
  notice(notice: "outputLost"): void;
}

// Keystrokes go out in frames well under the BFF's cap, so a long paste is never refused.
const maxInputFrameBytes = 16 * 1024;

export class ConsoleConnection {
  private state: ConsoleState = {
    status: { kind: "connecting", message: null },
    keyboard: null,
    guestSize: null,
    blankScreen: null,
    viewers: null,
    keyboardNews: null,
    fitFailure: null,
    inputRefused: false,
  };
  private readonly listeners = new Set<() => void>();
  private readonly socket: ReconnectingSocket;
  private unacked = 0;
  /** Writes of this socket's output not parsed yet. */
  private writing = 0;
  /** The terminal shows output from an earlier socket. */
  private showsOutput = false;
  /** The replay under way is not replacing what the terminal shows (the BFF had no screen). */
  private keepsOwnScreen = false;
  private readonly encoder = new TextEncoder();

  /** `path`: the console's path and query on the page's host (see console-url.ts). */
  constructor(
    path: string,
    private readonly sink: TerminalSink,
  ) {
    this.socket = new ReconnectingSocket(
      path,
      // A viewer dropped for being slow comes straight back for the current screen.
      { immediateCloseCodes: [consoleCloseCodes.tooSlow] },
      {
        // The BFF counts acks per socket: a new one starts from nothing owed.
        open: () => {
          this.unacked = 0;
          this.writing = 0;
        },
        message: (data, generation) => {
          if (typeof data === "string") this.receiveControl(data);
          else this.receiveOutput(new Uint8Array(data), generation);
        },
        status: (status) => {
          if (status.kind === "reconnecting")
            this.setStatus({ kind: "reconnecting", message: null, retryAt: status.retryAt });
        },
      },
    );
  }

  /** For useSyncExternalStore. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = (): ConsoleState => this.state;

  start(): void {
    this.socket.start();
  }

  reconnectNow(): void {
    this.socket.reconnectNow();
  }

  /** What xterm.js reports typed (onData): UTF-8 text. */
  sendText(data: string): void {
    this.sendBytes(this.encoder.encode(data));
  }

  /** What xterm.js reports as raw bytes (onBinary, e.g. some mouse reports): one char per byte. */
  sendBinaryString(data: string): void {
    this.sendBytes(Uint8Array.from(data, (char) => char.charCodeAt(0) & 0xff));
  }

  takeKeyboard(): void {
    this.sendControl({ type: "take-keyboard" });
  }

  releaseKeyboard(): void {
    this.sendControl({ type: "release-keyboard" });
  }

  fitGuest(cols: number, rows: number): void {
    if (this.state.fitFailure) this.update({ fitFailure: null });
    this.sendControl({ type: "fit-guest", cols, rows });
  }

  dispose(): void {
    this.socket.dispose("console closed");
    this.listeners.clear();
  }

  private receiveOutput(bytes: Uint8Array, generation: number): void {
    // A replay's own bytes come before its replay-end: only output after it fills a blank screen.
    if (this.state.blankScreen) this.update({ blankScreen: null });
    this.showsOutput = true;
    this.writing += 1;
    this.sink.write(bytes, () => {
      if (!this.socket.isCurrent(generation)) return;
      this.writing -= 1;
      this.unacked += bytes.length;
      if (this.unacked >= consoleAckBytes || this.writing === 0) {
        this.sendControl({ type: "ack", bytes: this.unacked });
        this.unacked = 0;
      }
    });
  }

  private receiveControl(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return;
    }
    const parsed = ConsoleServerMessage.safeParse(json);
    if (!parsed.success) return;
    const message = parsed.data;
    switch (message.type) {
      case "status":
        this.setStatus(statusFromUpstream(message.state, message.message, message.notice ?? undefined));
        if (message.state === "connected") {
          this.socket.resetBackoff();
          if (this.state.inputRefused) this.update({ inputRefused: false });
        }
        return;
      case "replay-begin":
        // The BFF's screen replaces ours; if it has none (it restarted), keep ours and say so.
        this.keepsOwnScreen = message.fresh && this.showsOutput;
        if (!message.fresh) this.sink.clear();
        else if (this.showsOutput) this.sink.notice("outputLost");
        return;
      case "replay-end":
        // A blank screen of the BFF's over the one kept here is not blank to the person.
        this.update({ blankScreen: this.keepsOwnScreen ? null : (message.blank ?? null) });
        return;
      case "keyboard": {
        const { holder, holderIsOwner, canType, canTake, canRelease } = message;
        this.update({ keyboard: { holder, holderIsOwner, canType, canTake, canRelease } });
        return;
      }
      case "guest-size":
        this.update({ guestSize: { cols: message.cols, rows: message.rows }, fitFailure: null });
        return;
      case "fit-failed":
        this.update({ fitFailure: message.code });
        return;
      case "input-refused":
        this.update({ inputRefused: true });
        return;
      case "viewers": {
        const viewers = { viewers: message.viewers, holder: message.holder };
        const news = keyboardNews(this.state.viewers, viewers);
        this.update({ viewers, ...(news ? { keyboardNews: news } : {}) });
        return;
      }
      case "ended":
        this.socket.finish();
        this.setStatus({
          kind: "ended",
          reason: message.reason,
          ...(message.notice ? { notice: message.notice } : {}),
        });
        return;
    }
  }

  private sendBytes(bytes: Uint8Array<ArrayBuffer>): void {
    if (!this.socket.isOpen || !this.state.keyboard?.canType) return;
    for (let offset = 0; offset < bytes.length; offset += maxInputFrameBytes) {
      this.socket.send(bytes.subarray(offset, offset + maxInputFrameBytes));
    }
  }

  private sendControl(message: ConsoleClientMessage): void {
    this.socket.send(JSON.stringify(message));
  }

  private setStatus(status: ConnectionStatus): void {
    this.update({ status });
  }

  private update(change: Partial<ConsoleState>): void {
    this.state = { ...this.state, ...change };
    for (const listener of this.listeners) listener();
  }
}
