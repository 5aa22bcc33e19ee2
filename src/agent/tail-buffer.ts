// Keeps only the last `limit` bytes of a stream: when a check floods its output, the end says most.
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    // Whole chunks go once the rest still fills the limit; text() trims the remainder.
    for (
      let first = this.chunks[0];
      first && this.size - first.length >= this.limit;
      first = this.chunks[0]
    ) {
      this.chunks.shift();
      this.size -= first.length;
      this.dropped = true;
    }
  }

  get truncated(): boolean {
    return this.dropped || this.size > this.limit;
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    let tail = all.subarray(Math.max(0, all.length - this.limit));
    if (this.truncated) {
      // The cut may land inside a UTF-8 character: skip its continuation bytes (10xxxxxx).
      let start = 0;
      while (start < 3 && start < tail.length && ((tail[start] ?? 0) & 0xc0) === 0x80) start++;
      tail = tail.subarray(start);
    }
    return tail.toString("utf8");
  }
}
