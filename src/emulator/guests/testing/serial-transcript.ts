// Test helper: attaches to a guest's serial line, keeps the tail of what it printed and waits for text.
import { patient } from "../../../common/testing/patience.ts";
import type { Guest } from "../sandbox/guest.ts";
import type { SerialAttachment, SerialCloseReason } from "../serial-line.ts";

interface Waiter {
  pattern: RegExp;
  resolve(text: string): void;
}

export class SerialTranscript {
  private readonly attachment: SerialAttachment;
  private readonly keep: number;
  private readonly waiters = new Set<Waiter>();
  private tail = "";
  private receivedBytes = 0;
  private closeReason: SerialCloseReason | undefined;

  /** `keep`: how many characters of output to remember (a flood like `yes` must not fill the memory). */
  constructor(guest: Pick<Guest, "attach">, keep = 64 * 1024) {
    this.keep = keep;
    this.attachment = guest.attach({
      onData: (chunk) => {
        this.receivedBytes += chunk.length;
        this.tail = (this.tail + chunk.toString("latin1")).slice(-this.keep);
        for (const waiter of this.waiters) {
          if (waiter.pattern.test(this.tail)) {
            this.waiters.delete(waiter);
            waiter.resolve(this.tail);
          }
        }
      },
      onClose: (reason) => (this.closeReason = reason),
    });
  }

  get text(): string {
    return this.tail;
  }

  /** Every byte received, including those no longer kept. */
  get bytes(): number {
    return this.receivedBytes;
  }

  get closed(): SerialCloseReason | undefined {
    return this.closeReason;
  }

  type(text: string | Buffer): void {
    this.attachment.write(typeof text === "string" ? Buffer.from(text, "utf8") : text);
  }

  /** Forget what was printed so far, so the next waitFor only sees new output. */
  clear(): void {
    this.tail = "";
  }

  pause(): void {
    this.attachment.pause();
  }

  resume(): void {
    this.attachment.resume();
  }

  detach(): void {
    this.attachment.detach();
  }

  /** Resolves with the kept output once it matches; rejects after timeoutMs showing what did arrive. */
  waitFor(pattern: RegExp | string, timeoutMs = 5000): Promise<string> {
    const regex = typeof pattern === "string" ? new RegExp(escapeRegExp(pattern)) : pattern;
    if (regex.test(this.tail)) return Promise.resolve(this.tail);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        pattern: regex,
        resolve: (text) => {
          clearTimeout(timer);
          resolve(text);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(
          new Error(
            `serial output did not match ${regex} within ${timeoutMs} ms; got:\n${this.tail.slice(-2000)}`,
          ),
        );
      }, patient(timeoutMs));
      this.waiters.add(waiter);
    });
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
