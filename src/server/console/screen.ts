// The BFF's copy of one console's screen: a headless xterm.js fed with everything the VM prints, so a
// viewer who joins (or reloads) gets the exact screen, modes and recent scrollback, serialized. A raw
// byte buffer could not do this: cut anywhere, it may split an escape sequence or replay a screen
// that was long since cleared.
//
// Output is parsed in batches, one at a time: whatever arrived while the previous batch was being
// parsed goes in the next. Within a batch, text that would scroll out of the copy anyway is skipped
// (plain-runs.ts), which keeps a flood cheap.
import serializePackage from "@xterm/addon-serialize";
import headlessPackage, { type ITerminalAddon } from "@xterm/headless";
import { PlainRunFinder } from "./plain-runs.ts";

// Both packages are CommonJS whose exports Node cannot name statically.
const { Terminal } = headlessPackage;
const { SerializeAddon } = serializePackage;

/** The visible screen as text, for miniatures (the class wall). */
export interface ScreenText {
  rows: string[];
  cursor: { x: number; y: number };
}

export interface ScreenOptions {
  cols: number;
  rows: number;
  scrollback: number;
}

const carriageReturn = Buffer.from("\r");
// xterm.js parses each write in one go and takes a break between writes every few milliseconds:
// slices keep the event loop (acks, keystrokes, other consoles) moving while a big batch is parsed.
const writeSliceBytes = 32 * 1024;

interface PendingSnapshot {
  /** Answered once the output up to here is parsed, before anything after it. */
  at: number;
  resolve(screen: string): void;
}

export class ConsoleScreen {
  private readonly terminal: InstanceType<typeof Terminal>;
  private readonly serializer: InstanceType<typeof SerializeAddon>;
  private readonly plainRuns = new PlainRunFinder();
  private readonly queue: Uint8Array[] = [];
  private readonly snapshots: PendingSnapshot[] = [];
  /** Bytes handed to write(), and bytes parsed, since the start. */
  private received = 0;
  private parsed = 0;
  private parsing = false;
  private disposed = false;
  private changes = 0;

  /** `onParsed` runs whenever a batch has been parsed, so the owner can resume a paused source. */
  constructor(
    private readonly options: ScreenOptions,
    private readonly onParsed: () => void,
  ) {
    this.terminal = new Terminal({
      cols: options.cols,
      rows: options.rows,
      scrollback: options.scrollback,
      allowProposedApi: true,
    });
    this.serializer = new SerializeAddon();
    // The addon is typed against @xterm/xterm's Terminal; the headless one has the same buffer API.
    this.terminal.loadAddon(this.serializer as unknown as ITerminalAddon);
  }

  /** Bytes written but not parsed yet. */
  get backlogBytes(): number {
    return this.received - this.parsed;
  }

  /** Goes up whenever the screen may have changed: readers compare it instead of the screen. */
  get version(): number {
    return this.changes;
  }

  /** False until the first output arrives: nothing to replay. */
  get hasOutput(): boolean {
    return this.received > 0;
  }

  write(chunk: Uint8Array): void {
    if (this.disposed || chunk.length === 0) return;
    this.queue.push(chunk);
    this.received += chunk.length;
    this.parseNextBatch();
  }

  /** The screen as it is after every write made before this call, and none made after. */
  snapshot(): Promise<string> {
    if (this.disposed) return Promise.resolve("");
    if (this.parsed === this.received) return Promise.resolve(this.serializer.serialize());
    return new Promise((resolve) => this.snapshots.push({ at: this.received, resolve }));
  }

  resize(cols: number, rows: number): void {
    if (this.disposed) return;
    this.terminal.resize(cols, rows);
    this.changes += 1;
  }

  /** The visible rows as plain text (trailing blanks trimmed) and the cursor, as parsed so far. */
  text(): ScreenText {
    const buffer = this.terminal.buffer.active;
    const rows: string[] = [];
    for (let y = 0; y < this.terminal.rows; y += 1) {
      rows.push(buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? "");
    }
    return { rows, cursor: { x: buffer.cursorX, y: buffer.cursorY } };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.terminal.dispose();
    this.queue.length = 0;
    for (const snapshot of this.snapshots.splice(0)) snapshot.resolve("");
  }

  private parseNextBatch(): void {
    if (this.parsing || this.disposed || this.queue.length === 0) return;
    // A batch ends where the next snapshot was asked for, so that snapshot sees exactly what came before.
    const limit = this.snapshots[0]?.at ?? Infinity;
    const chunks: Uint8Array[] = [];
    let size = 0;
    while (this.queue.length > 0 && this.parsed + size < limit) {
      const chunk = this.queue.shift()!;
      chunks.push(chunk);
      size += chunk.length;
    }
    const batch = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    this.parsing = true;
    const input = this.withoutScrolledAway(batch);
    for (let offset = 0; offset < input.length; offset += writeSliceBytes) {
      const last = offset + writeSliceBytes >= input.length;
      this.terminal.write(
        input.subarray(offset, offset + writeSliceBytes),
        last ? () => this.batchParsed(size) : undefined,
      );
    }
  }

  private batchParsed(size: number): void {
    this.parsing = false;
    this.parsed += size;
    this.changes += 1;
    if (this.disposed) return;
    while (this.snapshots[0] && this.snapshots[0].at <= this.parsed) {
      this.snapshots.shift()!.resolve(this.serializer.serialize());
    }
    this.onParsed();
    this.parseNextBatch();
  }

  /** The batch with the heads of long plain runs replaced by a CR (see plain-runs.ts). */
  private withoutScrolledAway(batch: Uint8Array): Uint8Array {
    const keepLines = this.terminal.rows + this.options.scrollback + 1;
    const skippable = this.plainRuns.scan(batch, keepLines);
    if (skippable.length === 0) return batch;
    const parts: Uint8Array[] = [];
    let from = 0;
    for (const { start, end } of skippable) {
      parts.push(batch.subarray(from, start), carriageReturn);
      from = end;
    }
    parts.push(batch.subarray(from));
    return Buffer.concat(parts);
  }
}
