// The rows that left a screen copy's normal screen, kept as plain text for the class wall's search:
// those that scrolled up, and those erased from it (`clear`, Ctrl-L, a reset), which a TA counts as
// gone the same way but which never reach the terminal's scrollback.
//
// The text is read lazily, only the rows that scrolled up since the last read (a marker on the newest
// row read). The screen copy (screen.ts) has it read before the terminal loses rows: before they move
// to its archive, and before an erase of the scrollback (bash's `clear` erases the screen and then
// the scrollback).
import type { IBufferLine, IMarker, Terminal } from "@xterm/headless";

/**
 * Rows that left the screen, oldest first, numbered: as many were kept before `first` and dropped.
 * `from` tells one screen copy's rows from another's, which number theirs from 0 too.
 */
export interface DepartedRows {
  rows: readonly string[];
  first: number;
  from: symbol;
}

/** A row as plain text (trailing blanks trimmed). */
function rowText(line: IBufferLine | undefined): string {
  return line?.translateToString(true) ?? "";
}

/**
 * The same rows, flattened to keep. xterm.js builds a row a character at a time, which V8 holds as a
 * chain of strings, one a character: about 2 KB for a row of 80, 600 MB for a thousand rows on 300
 * screens. Joined, they are one flat string, and the rows split from it slices of it (no row holds a
 * line break).
 */
function flattened(rows: string[]): string[] {
  return rows.join("\n").split("\n");
}

export class SearchableScrollback {
  /** The rows that left the normal screen as plain text, oldest first. */
  private departed: DepartedRows = { rows: [], first: 0, from: Symbol("screen copy") };
  /**
   * The newest row of the normal buffer's scrollback read into `departed`. It moves with its row as
   * the buffer scrolls and reflows, and is disposed when its row is trimmed (every row left is
   * newer); none when the scrollback was empty. Never a row of the screen: erasing one disposes it.
   */
  private lastRead: IMarker | undefined;
  private disposed = false;

  /** Keeps the newest `maxRows` rows that left `terminal`'s normal screen. */
  constructor(
    private readonly terminal: Terminal,
    private readonly maxRows: number,
  ) {}

  /** The rows kept, with those that scrolled up since the last call read first (see ConsoleScreen). */
  rows(): DepartedRows {
    this.readScrolledUp();
    return this.departed;
  }

  /** Reads into the rows kept those that scrolled up off the normal screen since the last read. */
  readScrolledUp(): void {
    // The normal buffer does not scroll while the alternate one shows: it was read on the way in.
    if (this.disposed || this.terminal.buffer.active.type !== "normal") return;
    const buffer = this.terminal.buffer.normal;
    const lastRead = this.lastRead?.isDisposed ? undefined : this.lastRead;
    const from = Math.max(lastRead ? lastRead.line + 1 : 0, buffer.baseY - this.maxRows);
    if (from >= buffer.baseY) return;
    const rows: string[] = [];
    for (let y = from; y < buffer.baseY; y += 1) rows.push(rowText(buffer.getLine(y)));
    this.keep(rows);
    this.markScrollbackRead();
  }

  /** Marks the normal buffer's newest row above the screen (the active one) as the last read. */
  markScrollbackRead(): void {
    const buffer = this.terminal.buffer.normal;
    this.lastRead?.dispose();
    // An offset from the cursor's row.
    this.lastRead = buffer.baseY > 0 ? this.terminal.registerMarker(-buffer.cursorY - 1) : undefined;
  }

  /** Before an erase in display (ED) on the normal screen: keeps as text the rows it takes away. */
  beforeErase(mode: number): void {
    if (this.terminal.buffer.active.type !== "normal") return;
    const buffer = this.terminal.buffer.normal;
    // 3 erases the scrollback: read it first. 2 erases the screen, and so does 0 from the top left.
    const wholeScreen = mode === 2 || (mode === 0 && buffer.cursorX === 0 && buffer.cursorY === 0);
    if (mode !== 3 && !wholeScreen) return;
    this.readScrolledUp();
    if (wholeScreen) this.keep(this.screenRows());
  }

  /** Before a full reset (RIS), which erases both buffers: keeps the normal screen's rows. */
  beforeReset(): void {
    this.readScrolledUp();
    this.keep(this.screenRows());
    // The reset replaces the buffers, not disposing the marker: every row after it is new.
    this.lastRead?.dispose();
    this.lastRead = undefined;
  }

  dispose(): void {
    this.disposed = true;
    this.departed = { ...this.departed, rows: [] };
    this.lastRead = undefined;
  }

  /** The normal screen's rows as text, up to the last that shows anything. */
  private screenRows(): string[] {
    const buffer = this.terminal.buffer.normal;
    const rows: string[] = [];
    for (let y = 0; y < this.terminal.rows; y += 1) rows.push(rowText(buffer.getLine(buffer.baseY + y)));
    while (rows.length > 0 && rows.at(-1)!.trim() === "") rows.pop();
    return rows;
  }

  /** Adds rows after the ones kept, keeping the newest `maxRows`. */
  private keep(rows: string[]): void {
    if (rows.length === 0) return;
    const all = this.departed.rows.concat(flattened(rows));
    const dropped = Math.max(0, all.length - this.maxRows);
    this.departed = { ...this.departed, rows: all.slice(dropped), first: this.departed.first + dropped };
  }
}
