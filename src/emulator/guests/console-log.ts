// What virt-tail prints from a guest's serial log: everything the guest wrote since boot, whether or
// not anyone was attached. Bounded like a rotated log file: the oldest lines go first.
const defaultLimitBytes = 1024 * 1024;
const newline = 0x0a;

export class ConsoleLog {
  #chunks: Buffer[] = [];
  #size = 0;
  /** The oldest line kept was longer than the limit: the rest of it is dropped too. */
  #inCutLine = false;
  readonly #limitBytes: number;

  constructor(limitBytes = defaultLimitBytes) {
    this.#limitBytes = limitBytes;
  }

  append(chunk: Buffer): void {
    if (this.#inCutLine) {
      const end = chunk.indexOf(newline);
      if (end === -1) return;
      this.#inCutLine = false;
      chunk = chunk.subarray(end + 1);
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    if (this.#size > this.#limitBytes) {
      const all = Buffer.concat(this.#chunks);
      // Trimmed to three quarters, so a chatty guest at the limit costs one copy now and then, not per chunk.
      const cut = this.#size - Math.floor((this.#limitBytes * 3) / 4);
      // A line cut at its start is not a line the guest printed: the log starts at the next one.
      const lineStart = all[cut - 1] === newline ? cut : all.indexOf(newline, cut) + 1;
      this.#inCutLine = lineStart === 0;
      const kept = this.#inCutLine ? Buffer.alloc(0) : all.subarray(lineStart);
      this.#chunks = [kept];
      this.#size = kept.length;
    }
  }

  /** Complete lines only, as virt-tail prints them: a prompt waits until a newline follows it. */
  completeLines(): string[] {
    const text = Buffer.concat(this.#chunks).toString("utf8");
    const lines = text.split("\n");
    lines.pop();
    return lines.map((line) => line.replace(/\r+$/, ""));
  }
}
