// The BFF's copy of one console's screen: a headless xterm.js fed with everything the VM prints, so a
// viewer who joins (or reloads) gets the exact screen, modes and recent scrollback, serialized. A raw
// byte buffer could not do this: cut anywhere, it may split an escape sequence or replay a screen
// that was long since cleared.
//
// Output is parsed lazily, in batches, one at a time: once it has been quiet for a moment, or has
// waited long enough, or a batch's worth of bytes waits, or someone reads the screen (a replay, the
// class wall, its search), who then waits for what came before the read. Meanwhile it waits in a
// queue that drops, as it arrives, text that would scroll out of the copy anyway (output-queue.ts):
// a flood costs a scan of its bytes and, now and then, a parse of the last screenful and scrollback.
//
// Once output has been quiet for a moment, the rows that scrolled off the screen move out of the
// terminal into a serialized archive (scrollback-archive.ts), which takes a twentieth of the memory;
// a snapshot is the archive followed by the terminal's own serialization.
//
// The rows that left the normal screen are also kept as plain text, for the class wall's search
// (searchable-scrollback.ts).
import serializePackage from "@xterm/addon-serialize";
import headlessPackage, { type ITerminalAddon } from "@xterm/headless";
import { OutputQueue } from "./output-queue.ts";
import { archiveChunkRows, ScrollbackArchive } from "./scrollback-archive.ts";
import { SearchableScrollback, type DepartedRows } from "./searchable-scrollback.ts";

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
  /** The most rows that left the screen kept as text for the class wall's search, newest kept. */
  searchableRows: number;
  /** How long output must have been quiet before the scrollback moves to the archive. */
  archiveAfterMs: number;
  /** The share of the time archiving between slices of a batch may take (0 never, 1 always). */
  archiveBusyShare: number;
  /** Output waiting is parsed once no more has come for this long... */
  parseQuietMs: number;
  /** ...or once its oldest byte has waited this long, however busy the console... */
  parseAtLatestMs: number;
  /** ...or as soon as this many bytes wait. */
  parseBatchBytes: number;
}

// xterm.js parses each write in one go and takes a break between writes every few milliseconds:
// slices keep the event loop (acks, keystrokes, other consoles) moving while a big batch is parsed.
// Small ones also keep its parse buffer (4 bytes per byte of the largest write, up to 512 KiB, kept
// for the terminal's life) at its initial 16 KiB.
const writeSliceBytes = 4 * 1024;
/** The most archiving time between slices a console saves up while quiet. */
const busyArchiveBudgetMaxMs = 50;

/** Something to do once the output written before it is parsed, before anything after it. */
interface PendingRead {
  /** Where it was asked for, in the output stream. */
  at: number;
  /** Runs right after the batch ending there; also when the screen is disposed. */
  then(): void;
}

export class ConsoleScreen {
  private readonly terminal: InstanceType<typeof Terminal>;
  private readonly serializer: InstanceType<typeof SerializeAddon>;
  private readonly queue: OutputQueue;
  private readonly reads: PendingRead[] = [];
  private readonly archive = new ScrollbackArchive();
  private readonly searchable: SearchableScrollback;
  private archiveTimer: NodeJS.Timeout | undefined;
  private archiveBudgetMs = busyArchiveBudgetMaxMs;
  private archiveBudgetAt = performance.now();
  /** A scroll region other than the whole screen may be set, in the normal or the alternate buffer. */
  private readonly scrollRegionSet = { normal: false, alternate: false };
  /** Where the output parsed ends in the stream, and the bytes of the batch being parsed. */
  private parsedTo = 0;
  private parsingBytes = 0;
  private parsing = false;
  /** When the last output came, and when the oldest output not parsed yet came. */
  private lastWriteAt = -Infinity;
  private waitingSince = -Infinity;
  private parseTimer: NodeJS.Timeout | undefined;
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
      // xterm.js logs what it cannot parse (every DEL a guest prints, for one): a guest could fill
      // the BFF's log, a line a byte.
      logLevel: "off",
    });
    this.queue = new OutputQueue(this.keepLines(options.rows));
    this.serializer = new SerializeAddon();
    // The addon is typed against @xterm/xterm's Terminal; the headless one has the same buffer API.
    this.terminal.loadAddon(this.serializer as unknown as ITerminalAddon);
    this.searchable = new SearchableScrollback(this.terminal, options.searchableRows);
    // Watched, not handled: returning false lets xterm.js go on as usual.
    this.terminal.parser.registerCsiHandler({ final: "r" }, (params) => {
      this.noteScrollRegion(params);
      return false;
    });
    this.terminal.parser.registerCsiHandler({ final: "J" }, (params) => {
      this.beforeErase(Number(params[0]) || 0);
      return false;
    });
    // While the alternate screen shows, no marker can be set on the normal buffer: read on the way in.
    this.terminal.parser.registerCsiHandler({ prefix: "?", final: "h" }, (params) => {
      if (params.some((mode) => mode === 47 || mode === 1047 || mode === 1049))
        this.searchable.readScrolledUp();
      return false;
    });
    // A full reset (RIS) erases both buffers, the archive's older part of the scrollback with them.
    this.terminal.parser.registerEscHandler({ final: "c" }, () => {
      this.searchable.beforeReset();
      this.archive.clear();
      return false;
    });
  }

  /** Bytes waiting to be parsed, or being parsed: what the copy holds on top of its terminal. */
  get backlogBytes(): number {
    return this.queue.bytes + this.parsingBytes;
  }

  /**
   * Goes up whenever the screen may have changed (output written, a resize): readers compare it
   * instead of the screen, and wait for `whenParsed()` before reading a changed one.
   */
  get version(): number {
    return this.changes;
  }

  /** False until the first output arrives: nothing to replay. */
  get hasOutput(): boolean {
    return this.queue.end > 0;
  }

  write(chunk: Uint8Array): void {
    if (this.disposed || chunk.length === 0) return;
    const now = performance.now();
    if (!this.waiting) this.waitingSince = now;
    // Nothing may be dropped on behalf of what comes after a reader's position.
    this.queue.push(chunk, this.reads.length === 0);
    this.lastWriteAt = now;
    this.changes += 1;
    this.parseWhenDue();
  }

  /** The screen as it is after every write made before this call, and none made after. */
  snapshot(): Promise<string> {
    if (this.disposed) return Promise.resolve("");
    if (this.parsedTo === this.queue.end) return Promise.resolve(this.serialize());
    return new Promise((resolve) => this.afterParse(() => resolve(this.disposed ? "" : this.serialize())));
  }

  /**
   * Resolves once every write made before this call is parsed (at once when nothing waits): `text()`
   * and `searchableScrollback()` then show them.
   */
  whenParsed(): Promise<void> {
    if (this.disposed || this.parsedTo === this.queue.end) return Promise.resolve();
    return new Promise((resolve) => this.afterParse(resolve));
  }

  /** Takes effect after the output written before it, as the guest's terminal did. */
  resize(cols: number, rows: number): void {
    if (this.disposed) return;
    this.queue.setKeepLines(this.keepLines(rows));
    this.changes += 1;
    if (this.parsedTo === this.queue.end) this.resizeTerminal(cols, rows);
    else this.afterParse(() => this.resizeTerminal(cols, rows));
  }

  private resizeTerminal(cols: number, rows: number): void {
    if (this.disposed) return;
    this.searchable.readScrolledUp();
    this.terminal.resize(cols, rows);
    // The rows above the screen are reflowed, and the marker may not follow its row: they count as
    // read. A narrower screen may push a row or two of its own up with them, unsearched from then on.
    if (this.terminal.buffer.active.type === "normal") this.searchable.markScrollbackRead();
    // A resize sets both buffers' scroll regions back to the whole screen.
    this.scrollRegionSet.normal = false;
    this.scrollRegionSet.alternate = false;
    this.scheduleArchive();
  }

  /** No character on the screen or in the scrollback, as parsed so far. */
  get showsNothing(): boolean {
    if (this.archive.rows > 0) return false;
    const buffer = this.terminal.buffer.active;
    for (let y = 0; y < buffer.length; y += 1) {
      if (buffer.getLine(y)?.translateToString(true).trim()) return false;
    }
    return true;
  }

  /** Rows the terminal holds, screen and scrollback: the rest of the scrollback is archived. */
  get terminalRows(): number {
    return this.terminal.buffer.normal.length;
  }

  /** The visible rows as plain text (trailing blanks trimmed) and the cursor, as parsed so far (see `whenParsed`). */
  text(): ScreenText {
    const buffer = this.terminal.buffer.active;
    const rows: string[] = [];
    for (let y = 0; y < this.terminal.rows; y += 1) {
      rows.push(buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? "");
    }
    return { rows, cursor: { x: buffer.cursorX, y: buffer.cursorY } };
  }

  /**
   * The rows that left the normal screen, as plain text (trailing blanks trimmed), oldest first, the
   * newest `searchableRows` of them: those that scrolled up, and the rows an erase of the whole
   * screen or a reset wiped (up to the last that showed anything), in the order they left. Rows keep
   * the width they had when they left; only those that left since the last call are read. A new
   * object when rows were added, never changed after: readers compare the last one they got. As
   * parsed so far (see `whenParsed`).
   */
  searchableScrollback(): DepartedRows {
    return this.searchable.rows();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.archiveTimer);
    clearTimeout(this.parseTimer);
    this.terminal.dispose();
    this.archive.clear();
    this.searchable.dispose();
    this.queue.clear();
    for (const read of this.reads.splice(0)) read.then();
  }

  /**
   * Lines of a plain run the copy must parse: enough that whatever the screen held when the run
   * began has scrolled out of the scrollback, wherever the cursor was. From the top row, the first
   * rows - 1 lines only move down, overwriting the rows below as far as they reach; then rows more
   * push the screen into the scrollback, and the scrollback's worth more push it out.
   */
  private keepLines(rows: number): number {
    return 2 * rows + this.options.scrollback;
  }

  /** Output waits that was not taken for parsing yet. */
  private get waiting(): boolean {
    return this.queue.start < this.queue.end;
  }

  private afterParse(then: () => void): void {
    this.reads.push({ at: this.queue.end, then });
    this.parseWhenDue();
  }

  /** Starts the next batch if it is due (see the top of the file), else makes sure a timer will. */
  private parseWhenDue(): void {
    if (this.parsing || this.disposed || !this.waiting) return;
    const { parseQuietMs, parseAtLatestMs, parseBatchBytes } = this.options;
    const dueAt = Math.min(this.lastWriteAt + parseQuietMs, this.waitingSince + parseAtLatestMs);
    const now = performance.now();
    if (this.reads.length === 0 && this.backlogBytes < parseBatchBytes && now < dueAt) {
      // One timer, moved on only when it fires: a write in a flood costs no timer work.
      this.parseTimer ??= setTimeout(() => {
        this.parseTimer = undefined;
        this.parseWhenDue();
      }, dueAt - now);
      return;
    }
    clearTimeout(this.parseTimer);
    this.parseTimer = undefined;
    this.parseBatch();
  }

  private parseBatch(): void {
    // A batch ends where the next read was asked for, so that it sees exactly what came before.
    const { parts, end } = this.queue.take(this.reads[0]?.at);
    this.waitingSince = performance.now();
    this.parsing = true;
    const slices = [...writeSlices(parts)];
    this.parsingBytes = parts.reduce((sum, part) => sum + part.length, 0);
    if (slices.length === 0) {
      this.batchParsed(end);
      return;
    }
    slices.forEach((slice, index) => {
      const last = index === slices.length - 1;
      this.terminal.write(slice, () => (last ? this.batchParsed(end) : this.archiveIfLong()));
    });
  }

  /**
   * Between two slices of a batch: archives once the terminal holds a chunk of scrollback, so that
   * a burst of output does not grow it to its whole scrollback (memory the terminal once held stays
   * with the process after it is freed: its peak is what a console costs). In a flood each batch
   * replaces the whole scrollback, so what is archived is soon dropped again: a budget keeps that
   * work to a share of the time (`archiveBusyShare`), and the quiet-time archive catches up.
   */
  private archiveIfLong(): void {
    if (this.disposed || this.terminal.buffer.normal.baseY < archiveChunkRows) return;
    if (this.options.archiveBusyShare >= 1) {
      this.archiveScrollback();
      return;
    }
    const now = performance.now();
    this.archiveBudgetMs = Math.min(
      busyArchiveBudgetMaxMs,
      this.archiveBudgetMs + (now - this.archiveBudgetAt) * this.options.archiveBusyShare,
    );
    this.archiveBudgetAt = now;
    if (this.archiveBudgetMs <= 0) return;
    this.archiveScrollback();
    const end = performance.now();
    this.archiveBudgetMs -= end - now;
    this.archiveBudgetAt = end;
  }

  private batchParsed(end: number): void {
    this.parsing = false;
    this.parsingBytes = 0;
    this.parsedTo = end;
    if (this.disposed) return;
    while (this.reads[0] && this.reads[0].at <= this.parsedTo) this.reads.shift()!.then();
    this.scheduleArchive();
    this.onParsed();
    this.parseWhenDue();
  }

  /** The archived rows, then the terminal's: the screen as a fresh terminal would print it. */
  private serialize(): string {
    this.archive.keepRows(this.options.scrollback - this.terminal.buffer.normal.baseY);
    return this.archive.serialize(this.terminal.rows) + this.serializer.serialize();
  }

  private scheduleArchive(): void {
    if (this.archiveTimer) {
      this.archiveTimer.refresh();
      return;
    }
    this.archiveTimer = setTimeout(() => {
      this.archiveTimer = undefined;
      if (!this.parsing && !this.waiting) this.archiveScrollback();
    }, this.options.archiveAfterMs);
    this.archiveTimer.unref();
  }

  /**
   * Moves the rows above the screen (but for the head of a line wrapped onto it) to the archive;
   * only between writes, when the terminal has parsed all it was given.
   */
  private archiveScrollback(): void {
    if (this.disposed || !this.canTrimTerminal()) return;
    const buffer = this.terminal.buffer.normal;
    let end = buffer.baseY;
    while (end > 0 && buffer.getLine(end)?.isWrapped) end -= 1;
    if (end === 0) return;
    this.searchable.readScrolledUp();
    for (let start = 0; start < end;) {
      let stop = Math.min(start + archiveChunkRows, end);
      while (stop < end && buffer.getLine(stop)?.isWrapped) stop += 1;
      const serialized = this.serializer.serialize({
        range: { start, end: stop - 1 },
        excludeAltBuffer: true,
        excludeModes: true,
      });
      this.archive.append(serialized, stop - start);
      start = stop;
    }
    // Lowering the scrollback drops the oldest rows; raising it again leaves room for new ones.
    const kept = buffer.baseY - end;
    this.terminal.options.scrollback = kept;
    this.terminal.options.scrollback = this.options.scrollback;
    this.archive.keepRows(this.options.scrollback - kept);
  }

  /** Before an erase in display (ED): the searchable text keeps what it takes away. */
  private beforeErase(mode: number): void {
    this.searchable.beforeErase(mode);
    // 3 erases the scrollback, of which the archive is the older part: a replay must not bring it back.
    if (mode === 3 && this.terminal.buffer.active.type === "normal") this.archive.clear();
  }

  /**
   * Whether changing the scrollback leaves the terminal as it was: xterm.js handles it as a resize,
   * which also sets the scroll regions back to the whole screen and takes back a pending wrap (the
   * cursor past the last column).
   */
  private canTrimTerminal(): boolean {
    const { normal, alternate } = this.terminal.buffer;
    const { cols } = this.terminal;
    return (
      !this.scrollRegionSet.normal &&
      !this.scrollRegionSet.alternate &&
      normal.cursorX < cols &&
      alternate.cursorX < cols
    );
  }

  /** DECSTBM as xterm.js reads it: a top and bottom row, 1-based, the whole screen by default. */
  private noteScrollRegion(params: (number | number[])[]): void {
    const rows = this.terminal.rows;
    const top = Number(params[0]) || 1;
    const requested = Number(params[1]) || rows;
    const bottom = requested > rows ? rows : requested;
    // xterm.js ignores a region of less than two rows.
    if (bottom <= top) return;
    this.scrollRegionSet[this.terminal.buffer.active.type] = top !== 1 || bottom !== rows;
  }
}

/** Parts cut or grouped into writes of about `writeSliceBytes` (see writeSliceBytes). */
function* writeSlices(parts: Uint8Array[]): Generator<Uint8Array> {
  for (const part of parts) {
    for (let offset = 0; offset < part.length; offset += writeSliceBytes) {
      yield part.subarray(offset, offset + writeSliceBytes);
    }
  }
}
