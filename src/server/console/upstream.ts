// The BFF's one open line to what a console shows: a VM's serial console (here) or a terminal of its
// agent (terminals/agent-terminal.ts). KubeVirt sends nothing on an idle console, so proxies on the
// way cut it: pings keep it busy and find a dead one. Reading pauses on request, which pushes back
// through TCP to the guest rather than piling output up in the BFF.
import type WebSocket from "ws";
import type { RawData } from "ws";
import type { Notice } from "./notices.ts";

export interface UpstreamEvents {
  output(chunk: Buffer): void;
  /** It closed without our asking: kicked by another client, the VM went away, or the line died. */
  lost(code: number): void;
  /** It ended for good (a terminal's shell exited): the console ends, saying this. */
  ended(notice: Notice): void;
}

/** What a console needs of its line, whatever is at the other end. */
export interface UpstreamLine {
  /** Events flow from here on. */
  listen(events: UpstreamEvents): void;
  send(bytes: Uint8Array): void;
  pause(): void;
  resume(): void;
  heartbeat(): void;
  close(): void;
}

/** Opening a line failed in a way the line knows best: the console waits or ends with this notice. */
export class UpstreamRefusedError extends Error {
  constructor(
    readonly notice: Notice,
    readonly final: boolean,
  ) {
    super(notice.message);
  }
}

/** A VMI's serial console, as KubeVirt's console subresource carries it. */
export class UpstreamLink implements UpstreamLine {
  private closing = false;
  /** Something arrived since the last ping: output, or the pong. */
  private heard = true;
  private paused = false;

  constructor(private readonly socket: WebSocket) {}

  listen(events: UpstreamEvents): void {
    const { socket } = this;
    socket.on("message", (data: RawData, isBinary: boolean) => {
      this.heard = true;
      // KubeVirt's console speaks binary only; anything else is not serial output.
      if (isBinary && !this.closing) events.output(toBuffer(data));
    });
    socket.on("pong", () => {
      this.heard = true;
    });
    socket.on("error", () => {});
    socket.on("close", (code: number) => {
      if (!this.closing) events.lost(code);
    });
  }

  send(bytes: Uint8Array): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(bytes, { binary: true });
  }

  pause(): void {
    this.paused = true;
    this.socket.pause();
  }

  resume(): void {
    this.paused = false;
    this.socket.resume();
  }

  /**
   * Pings; a line that sent nothing since the previous ping is cut, which counts as lost. Any output
   * counts, not only the pong: behind a flood the pong waits after every byte still buffered on the
   * way, which takes longer than a ping interval to read on a busy BFF, and cutting such a line
   * would throw all of that output away (the prompt after a Ctrl-C among it).
   */
  heartbeat(): void {
    // While paused its pong sits unread in the socket: no verdict until reading resumes.
    if (this.paused) return;
    if (!this.heard) {
      this.socket.terminate();
      return;
    }
    this.heard = false;
    this.socket.ping();
  }

  close(): void {
    this.closing = true;
    this.socket.close(1000);
    // A peer that never answers the close frame must not keep the socket alive.
    setTimeout(() => this.socket.terminate(), 5_000).unref();
  }
}

/** A ws message as one Buffer, however ws delivered it. */
export function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}
