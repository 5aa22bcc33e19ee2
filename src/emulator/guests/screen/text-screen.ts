// A VGA text console, 80x25 cells of 9x16 pixels (720x400, the mode QEMU's guests show: docs/vnc.md),
// light grey on black, drawn with the VGA BIOS's font. It takes text as a terminal would (printable
// characters, \r, \n, backspace), scrolls at the bottom, and keeps its pixels as RGBA with the
// rectangle changed since the last time it was asked.
import { glyphHeight } from "./vga-font.ts";

export const columns = 80;
export const rows = 25;
const cellWidth = 9;
export const screenWidth = columns * cellWidth;
export const screenHeight = rows * glyphHeight;
const foreground = [0xaa, 0xaa, 0xaa];

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export class TextScreen {
  /** RGBA, row after row. */
  readonly pixels = new Uint8Array(screenWidth * screenHeight * 4);
  private readonly cells = new Uint8Array(columns * rows).fill(0x20);
  private column = 0;
  private row = 0;
  private dirty: { top: number; bottom: number } | undefined;

  constructor(private readonly glyphs: Uint8Array) {
    this.redrawRows(0, rows);
  }

  write(text: string): void {
    for (const character of text) {
      if (character === "\n") this.newline();
      else if (character === "\r") this.column = 0;
      else if (character === "\b") this.column = Math.max(0, this.column - 1);
      else {
        const code = character.charCodeAt(0);
        this.put(code < 256 ? code : 0x3f);
      }
    }
  }

  /** Blanks the cell before the cursor and moves onto it (an echoed erase: "\b \b"). */
  erase(): void {
    if (this.column === 0) return;
    this.column -= 1;
    this.put(0x20);
    this.column -= 1;
  }

  clear(): void {
    this.cells.fill(0x20);
    this.column = 0;
    this.row = 0;
    this.redrawRows(0, rows);
  }

  /** The rows changed since the last call, as one rectangle; undefined when nothing changed. */
  takeDirty(): Rect | undefined {
    const dirty = this.dirty;
    this.dirty = undefined;
    if (!dirty) return undefined;
    return {
      x: 0,
      y: dirty.top * glyphHeight,
      width: screenWidth,
      height: (dirty.bottom - dirty.top) * glyphHeight,
    };
  }

  /** The text of a row, trailing blanks left out (for tests and logs). */
  rowText(row: number): string {
    return String.fromCharCode(...this.cells.subarray(row * columns, (row + 1) * columns)).trimEnd();
  }

  private put(code: number): void {
    if (this.column >= columns) this.newline();
    this.cells[this.row * columns + this.column] = code;
    this.drawCell(this.row, this.column);
    this.markDirty(this.row, this.row + 1);
    this.column += 1;
  }

  private newline(): void {
    this.column = 0;
    if (this.row < rows - 1) {
      this.row += 1;
      return;
    }
    this.cells.copyWithin(0, columns);
    this.cells.fill(0x20, (rows - 1) * columns);
    this.redrawRows(0, rows);
  }

  private redrawRows(from: number, to: number): void {
    for (let row = from; row < to; row += 1) {
      for (let column = 0; column < columns; column += 1) this.drawCell(row, column);
    }
    this.markDirty(from, to);
  }

  private drawCell(row: number, column: number): void {
    const glyph = (this.cells[row * columns + column] ?? 0x20) * glyphHeight;
    for (let line = 0; line < glyphHeight; line += 1) {
      const bits = this.glyphs[glyph + line] ?? 0;
      for (let x = 0; x < cellWidth; x += 1) {
        // The ninth column stays blank, as VGA draws it for letters.
        const on = x < 8 && (bits & (0x80 >> x)) !== 0;
        const at = ((row * glyphHeight + line) * screenWidth + column * cellWidth + x) * 4;
        this.pixels[at] = on ? foreground[0]! : 0;
        this.pixels[at + 1] = on ? foreground[1]! : 0;
        this.pixels[at + 2] = on ? foreground[2]! : 0;
        this.pixels[at + 3] = 255;
      }
    }
  }

  private markDirty(top: number, bottom: number): void {
    this.dirty = this.dirty
      ? { top: Math.min(this.dirty.top, top), bottom: Math.max(this.dirty.bottom, bottom) }
      : { top, bottom };
  }
}
