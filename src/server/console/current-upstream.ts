// A console's line to the VM as it comes and goes (upstream-connector.ts opens it): keys typed while
// it is down wait for it (held-input.ts), and its reading stays paused across a reconnection while
// the output already taken waits too long a queue (the guest then blocks on its serial line).
import { HeldInput } from "./held-input.ts";
import type { UpstreamEvents, UpstreamLine } from "./upstream.ts";

export class CurrentUpstream {
  private line: UpstreamLine | undefined;
  private readonly heldInput: HeldInput;
  private paused = false;

  constructor(heldInputBytes: number) {
    this.heldInput = new HeldInput(heldInputBytes);
  }

  get connected(): boolean {
    return this.line !== undefined;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** The line is open: events flow from it, paused if reading is, and the keys held go out first. */
  attach(line: UpstreamLine, events: UpstreamEvents): void {
    this.line = line;
    line.listen(events);
    if (this.paused) line.pause();
    for (const keys of this.heldInput.take()) line.send(keys);
  }

  /** Sends the keys, or holds them while the line is down; false when they did not fit to be held. */
  send(keys: Buffer): boolean {
    if (this.line) this.line.send(keys);
    else return this.heldInput.hold(keys);
    return true;
  }

  heartbeat(): void {
    this.line?.heartbeat();
  }

  /** Stops reading once `backlogBytes` waiting exceeds the high watermark. */
  pauseAbove(backlogBytes: number, highWatermarkBytes: number): void {
    if (this.paused || backlogBytes <= highWatermarkBytes) return;
    this.paused = true;
    this.line?.pause();
  }

  resume(): void {
    this.paused = false;
    this.line?.resume();
  }

  /** It closed without our asking. */
  lost(): void {
    this.line = undefined;
  }

  close(): void {
    this.line?.close();
    this.line = undefined;
  }
}
