// Appends one session's console output to its .cast file, as it arrives. Writes are batched (a flood
// sends thousands of chunks a second) and strictly ordered; nothing already written is rewritten.
// Timestamps are taken when output arrives, not when it reaches the disk.
import { appendFile } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { eventLine, headerLine, sizeCapMarker, type RecordingHeader } from "./asciicast.ts";

/** What a student's screen showed is for the BFF alone; staff read it through the API. */
const privateFileMode = 0o600;

export interface RecordingWriterOptions {
  file: string;
  /** The file's header: written first for a new file; an existing file keeps its own. */
  header: RecordingHeader;
  /** Bytes already in the file (0 for a new one). */
  existingBytes: number;
  /** The file already ends with the size-cap marker: nothing more is written. */
  capped: boolean;
  maxBytes: number;
  onError(error: unknown): void;
}

export class RecordingWriter {
  private readonly decoder = new StringDecoder("utf8");
  private pending: string[] = [];
  private bytes: number;
  private flushing: Promise<void> | undefined;
  private stopped = false;
  private readonly startedAtMs: number;

  constructor(private readonly options: RecordingWriterOptions) {
    this.bytes = options.existingBytes;
    this.stopped = options.capped;
    this.startedAtMs = options.header.timestamp * 1000;
    if (options.existingBytes === 0) this.enqueue(headerLine(options.header));
  }

  /** Raw bytes as the VM printed them; a UTF-8 character split across chunks is kept whole. */
  output(chunk: Buffer, atMs: number = Date.now()): void {
    if (this.stopped) return;
    const text = this.decoder.write(chunk);
    if (text.length === 0) return;
    const seconds = Math.max(0, atMs - this.startedAtMs) / 1000;
    const line = eventLine(seconds, "o", text);
    const marker = eventLine(seconds, "m", sizeCapMarker);
    // Room is kept for the final marker, so a capped file still says why it stops.
    if (this.bytes + Buffer.byteLength(line) + Buffer.byteLength(marker) > this.options.maxBytes) {
      this.stopped = true;
      this.enqueue(marker);
      return;
    }
    this.enqueue(line);
  }

  get capped(): boolean {
    return this.stopped;
  }

  /** Resolves once everything accepted so far is on disk. */
  async flushed(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private enqueue(line: string): void {
    this.bytes += Buffer.byteLength(line);
    this.pending.push(line);
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.join("");
      this.pending = [];
      try {
        await appendFile(this.options.file, batch, { mode: privateFileMode });
      } catch (error) {
        this.options.onError(error);
      }
    }
    this.flushing = undefined;
  }
}
