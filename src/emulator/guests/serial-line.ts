// A guest's serial line as KubeVirt's virt-handler exposes it: one reader at a time, the newest
// attachment wins, and output that arrives while nobody is attached is gone (nothing is replayed).
import type { Readable, Writable } from "node:stream";

export type SerialCloseReason = "replaced" | "stopped";

export interface SerialHandlers {
  onData(chunk: Buffer): void;
  onClose(reason: SerialCloseReason): void;
}

export interface SerialAttachment {
  /** Raw bytes to the guest, as typed (e.g. "\r" for Enter, 0x03 for Ctrl-C). Ignored once detached. */
  write(bytes: Buffer): void;
  /**
   * Stop reading the guest's output until resume(), e.g. while a websocket's send buffer is full: the
   * guest's writes then block, as behind a slow serial reader. Detaching or being replaced resumes.
   */
  pause(): void;
  resume(): void;
  detach(): void;
}

interface Attachment {
  handlers: SerialHandlers;
}

export class SerialLine {
  private current: Attachment | undefined;
  private stopped = false;
  private readonly input: Writable;
  private readonly output: Readable;

  constructor(input: Writable, output: Readable) {
    this.input = input;
    this.output = output;
    output.on("data", (chunk: Buffer) => this.current?.handlers.onData(chunk));
    // After the guest died its input pipe breaks (EPIPE): the line is simply dead, stop() says so.
    input.on("error", () => undefined);
  }

  attach(handlers: SerialHandlers): SerialAttachment {
    const attachment: Attachment = { handlers };
    if (this.stopped) {
      queueMicrotask(() => handlers.onClose("stopped"));
    } else {
      const previous = this.current;
      this.current = attachment;
      this.output.resume();
      previous?.handlers.onClose("replaced");
    }
    const isCurrent = () => this.current === attachment;
    return {
      write: (bytes) => {
        if (isCurrent()) this.input.write(bytes);
      },
      pause: () => {
        if (isCurrent()) this.output.pause();
      },
      resume: () => {
        if (isCurrent()) this.output.resume();
      },
      detach: () => {
        if (!isCurrent()) return;
        this.current = undefined;
        this.output.resume();
      },
    };
  }

  /** The guest is gone: the current attachment is told so, later ones at once. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    const current = this.current;
    this.current = undefined;
    this.output.resume();
    current?.handlers.onClose("stopped");
  }
}
