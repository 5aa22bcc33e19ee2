// What a console tells its viewers of its line to the VM: connecting, connected or waiting, with the
// notice that explains it (the idle warning rides on "connected"). Sent to each viewer who joins and
// to all of them whenever it changes.
import type { ConsoleServerMessage, UpstreamState } from "../../common/console-protocol.ts";
import { wireNotice, type Notice } from "./notices.ts";

export class ConsoleStatus {
  private current: { state: UpstreamState; notice: Notice | null } = { state: "connecting", notice: null };

  constructor(private readonly broadcast: (message: ConsoleServerMessage) => void) {}

  get state(): UpstreamState {
    return this.current.state;
  }

  message(): ConsoleServerMessage {
    const { state, notice } = this.current;
    return { type: "status", state, message: notice?.message ?? null, notice: notice && wireNotice(notice) };
  }

  set(state: UpstreamState, notice: Notice | null): void {
    if (this.current.state === state && this.current.notice === notice) return;
    this.current = { state, notice };
    this.broadcast(this.message());
  }

  /** Shows the idle notice (null: none) while connected; it is replaced by any waiting notice. */
  showIdle(idle: Notice | null): void {
    if (this.current.state !== "connected") return;
    const shown = this.current.notice;
    const same = shown?.reason === idle?.reason && shown?.message === idle?.message;
    if (!same) this.set("connected", idle);
  }
}
