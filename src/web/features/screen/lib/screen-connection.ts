// The browser's end of a screen websocket (GET /api/sessions/:id/vnc): one ReconnectingSocket, and
// for each socket it opens a new ScreenChannel, which the page hands to a new noVNC RFB (an RFB
// cannot be reused once disconnected). The JSON messages say where the BFF's line to the VM stands,
// who types, who watches, and how a paste went. Reconnects after any drop, as the console does,
// until the BFF says the screen has ended.
import {
  maxPasteCharacters,
  ScreenServerMessage,
  type ScreenClientMessage,
} from "../../../../common/screen-protocol.ts";
import {
  statusFromUpstream,
  type ConnectionStatus,
  type KeyboardState,
} from "../../../lib/connection-status.ts";
import { keyboardNews, type ConsoleViewers, type KeyboardNews } from "../../../lib/keyboard-news.ts";
import { ReconnectingSocket } from "../../../lib/reconnecting-socket.ts";
import { ScreenChannel } from "./screen-channel.ts";

export type PasteRefusal = NonNullable<Extract<ScreenServerMessage, { type: "paste" }>["reason"]>;

export type PasteState =
  | { kind: "idle" }
  /** Sent; the BFF types it into the VM and says when it has. */
  | { kind: "typing"; characters: number }
  | { kind: "typed"; characters: number }
  /** Nothing of it was typed. `lost`: the connection dropped before the BFF answered. */
  | { kind: "refused"; reason: PasteRefusal | "lost" };

export interface ScreenState {
  status: ConnectionStatus;
  /** Unknown until the BFF says. */
  keyboard: KeyboardState | null;
  /** Everyone with the screen open, and who holds the keyboard; unknown until the BFF says. */
  viewers: ConsoleViewers | null;
  /** The latest change of the keyboard to or from staff, for the live region. */
  keyboardNews: KeyboardNews | null;
  paste: PasteState;
}

export class ScreenConnection {
  private state: ScreenState = {
    status: { kind: "connecting", message: null },
    keyboard: null,
    viewers: null,
    keyboardNews: null,
    paste: { kind: "idle" },
  };
  private readonly listeners = new Set<() => void>();
  private readonly channelListeners = new Set<(channel: ScreenChannel) => void>();
  private readonly socket: ReconnectingSocket;
  private channel: ScreenChannel | null = null;

  /** `path`: the screen's path and query on the page's host (see screen-url.ts). */
  constructor(path: string) {
    this.socket = new ReconnectingSocket(
      path,
      {},
      {
        open: () => this.openChannel(),
        message: (data) => this.channel?.deliver(data),
        status: (status) => {
          // The socket under the channel is gone (dropped, or closed for good).
          if (status.kind === "reconnecting" || status.kind === "closed") this.closeChannel(1006);
          if (status.kind === "reconnecting")
            this.update({ status: { kind: "reconnecting", message: null, retryAt: status.retryAt } });
        },
      },
    );
  }

  /** For useSyncExternalStore. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getState = (): ScreenState => this.state;

  /** Called with each new socket's channel, at once, before any of its frames: give it to a new RFB. */
  onChannel(listener: (channel: ScreenChannel) => void): () => void {
    this.channelListeners.add(listener);
    return () => this.channelListeners.delete(listener);
  }

  start(): void {
    this.socket.start();
  }

  reconnectNow(): void {
    this.socket.reconnectNow();
  }

  takeKeyboard(): void {
    this.sendControl({ type: "take-keyboard" });
  }

  releaseKeyboard(): void {
    this.sendControl({ type: "release-keyboard" });
  }

  /** Asks the BFF to type `text` into the VM; says false (and sends nothing) when it cannot be sent. */
  paste(text: string): boolean {
    if (text === "" || text.length > maxPasteCharacters || this.state.paste.kind === "typing") return false;
    if (!this.state.keyboard?.canType || !this.sendControl({ type: "paste", text })) return false;
    this.update({ paste: { kind: "typing", characters: text.length } });
    return true;
  }

  /** Forgets the last paste's outcome (the page has shown it). */
  clearPaste(): void {
    if (this.state.paste.kind !== "typing") this.update({ paste: { kind: "idle" } });
  }

  dispose(): void {
    this.socket.dispose("screen closed");
    this.closeChannel(1000);
    this.listeners.clear();
    this.channelListeners.clear();
  }

  private openChannel(): void {
    this.closeChannel(1006);
    const channel = new ScreenChannel(
      {
        send: (bytes) => {
          if (this.channel === channel) this.socket.send(bytes);
        },
        close: () => {
          if (this.channel === channel) this.socket.drop("the screen's stream could not be read");
        },
      },
      (text) => this.receiveControl(text),
    );
    this.channel = channel;
    for (const listener of this.channelListeners) listener(channel);
  }

  private closeChannel(code: number): void {
    const channel = this.channel;
    if (!channel) return;
    this.channel = null;
    channel.closed(code);
    // A paste the BFF never answered may or may not have been typed; the page says it was lost.
    if (this.state.paste.kind === "typing") this.update({ paste: { kind: "refused", reason: "lost" } });
  }

  private receiveControl(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return;
    }
    const parsed = ScreenServerMessage.safeParse(json);
    if (!parsed.success) return;
    const message = parsed.data;
    switch (message.type) {
      case "status":
        this.update({
          status: statusFromUpstream(message.state, message.message, message.notice ?? undefined),
        });
        if (message.state === "connected") this.socket.resetBackoff();
        return;
      case "keyboard": {
        const { holder, holderIsOwner, canType, canTake, canRelease } = message;
        this.update({ keyboard: { holder, holderIsOwner, canType, canTake, canRelease } });
        return;
      }
      case "viewers": {
        const viewers = { viewers: message.viewers, holder: message.holder };
        const news = keyboardNews(this.state.viewers, viewers);
        this.update({ viewers, ...(news ? { keyboardNews: news } : {}) });
        return;
      }
      case "paste":
        this.update({
          paste:
            message.outcome === "typed"
              ? { kind: "typed", characters: message.characters }
              : { kind: "refused", reason: message.reason ?? "unsupported" },
        });
        return;
      case "ended":
        this.socket.finish();
        this.update({
          status: {
            kind: "ended",
            reason: message.reason,
            ...(message.notice ? { notice: message.notice } : {}),
          },
        });
        return;
    }
  }

  private sendControl(message: ScreenClientMessage): boolean {
    return this.socket.send(JSON.stringify(message));
  }

  private update(change: Partial<ScreenState>): void {
    this.state = { ...this.state, ...change };
    for (const listener of this.listeners) listener();
  }
}
