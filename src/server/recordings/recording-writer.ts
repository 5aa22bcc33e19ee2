// Appends one session's console output to its recording, as it arrives. Writes are batched (a flood
// sends thousands of chunks a second) and strictly ordered; nothing already written is rewritten.
// Timestamps are taken when output arrives, not when it reaches the storage.
import { StringDecoder } from "node:string_decoder";
import { eventLine, headerLine, sizeCapMarker, type RecordingHeader } from "./asciicast.ts";
import type { RecordingBatch } from "./recording-storage.ts";

export interface RecordingWriterOptions {
  /** Stores one batch after the previous one (recording-storage.ts). */
  append(batch: RecordingBatch): Promise<void>;
  /** The recording's header: the storage writes it first for a new recording. */
  header: RecordingHeader;
  /** Bytes already stored, header line included (0 for a new recording). */
  existingBytes: number;
  /** The recording already ends with the size-cap marker: nothing more is written. */
  capped: boolean;
  maxBytes: number;
  /** A batch that could not be stored is dropped: the console goes on either way. */
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
    const { header, existingBytes } = options;
    this.bytes = existingBytes > 0 ? existingBytes : Buffer.byteLength(headerLine(header));
    this.stopped = options.capped;
    this.startedAtMs = header.timestamp * 1000;
  }

  /** Raw bytes as the VM printed them; a UTF-8 character split across chunks is kept whole. */
  output(chunk: Buffer, atMs: number = Date.now()): void {
    if (this.stopped) return;
    const text = this.decoder.write(chunk);
    if (text.length === 0) return;
    const seconds = Math.max(0, atMs - this.startedAtMs) / 1000;
    const line = eventLine(seconds, "o", text);
    const marker = eventLine(seconds, "m", sizeCapMarker);
    // Room is kept for the final marker, so a capped recording still says why it stops.
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

  /** Resolves once everything accepted so far is stored (or dropped). */
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
      const text = this.pending.join("");
      // Once stopped, the marker is the last line enqueued, so it is in this batch.
      const capped = this.stopped;
      this.pending = [];
      try {
        await this.options.append({ header: this.options.header, text, capped });
      } catch (error) {
        this.options.onError(error);
      }
    }
    this.flushing = undefined;
  }
}
