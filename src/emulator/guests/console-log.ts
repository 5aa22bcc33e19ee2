// What the pod log API serves from a guest's guest-console-log container: everything the guest wrote
// to its serial line since boot, whether or not anyone was attached. Bounded like a rotated log
// file: the oldest lines go first.
//
// On a node the output takes a detour before the log has it: QEMU appends it to the serial log
// file, virt-tail (following the file through inotify) prints each complete line, and the container
// runtime writes that into the container's log, dropping the CR before each LF (containerd's
// readLine). So the log lags the serial line by a few milliseconds, and a line the guest has not
// ended yet (a prompt) is not in it at all.
const defaultLimitBytes = 1024 * 1024;
/** How long output takes to reach the log: a few milliseconds on an idle node. */
const defaultLagMs = 20;
const newline = 0x0a;

interface ConsoleLogOptions {
  limitBytes?: number;
  lagMs?: number;
}

export class ConsoleLog {
  private chunks: Buffer[] = [];
  private size = 0;
  /** The oldest line kept was longer than the limit: the rest of it is dropped too. */
  private inCutLine = false;
  /** Output on its way to the log, oldest first. */
  private onTheWay: { chunk: Buffer; at: number }[] = [];
  private arrival: NodeJS.Timeout | undefined;
  private readonly limitBytes: number;
  private readonly lagMs: number;

  constructor(options: ConsoleLogOptions = {}) {
    this.limitBytes = options.limitBytes ?? defaultLimitBytes;
    this.lagMs = options.lagMs ?? defaultLagMs;
  }

  append(chunk: Buffer): void {
    if (this.lagMs <= 0) {
      this.store(chunk);
      return;
    }
    this.onTheWay.push({ chunk, at: performance.now() + this.lagMs });
    if (!this.arrival) this.arrival = setTimeout(() => this.arrive(), this.lagMs).unref();
  }

  /** Complete lines only, as virt-tail prints them, each without the CR the runtime drops. */
  completeLines(): string[] {
    const text = Buffer.concat(this.chunks).toString("utf8");
    const lines = text.split("\n");
    lines.pop();
    return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  }

  private arrive(): void {
    this.arrival = undefined;
    const now = performance.now();
    while (this.onTheWay[0] && this.onTheWay[0].at <= now) this.store(this.onTheWay.shift()!.chunk);
    const next = this.onTheWay[0];
    if (next) this.arrival = setTimeout(() => this.arrive(), Math.max(0, next.at - now)).unref();
  }

  private store(chunk: Buffer): void {
    if (this.inCutLine) {
      const end = chunk.indexOf(newline);
      if (end === -1) return;
      this.inCutLine = false;
      chunk = chunk.subarray(end + 1);
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size > this.limitBytes) {
      const all = Buffer.concat(this.chunks);
      // Trimmed to three quarters, so a chatty guest at the limit costs one copy now and then, not per chunk.
      const cut = this.size - Math.floor((this.limitBytes * 3) / 4);
      // A line cut at its start is not a line the guest printed: the log starts at the next one.
      const lineStart = all[cut - 1] === newline ? cut : all.indexOf(newline, cut) + 1;
      this.inCutLine = lineStart === 0;
      const kept = this.inCutLine ? Buffer.alloc(0) : all.subarray(lineStart);
      this.chunks = [kept];
      this.size = kept.length;
    }
  }
}
