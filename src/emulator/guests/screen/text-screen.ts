// A VGA text console, 80x25 cells of 9x16 pixels (720x400, the mode QEMU's guests show: docs/vnc.md),
// drawn with the VGA BIOS's font in the VGA's 16 colours. It takes text as a getty's prompt writes it
// (printable characters, \r, \n, backspace; light grey on black), scrolls at the bottom, and takes
// whole cells from a terminal emulator (setCell, the cursor); it keeps its pixels as RGBA with the
// rectangle changed since the last time it was asked.
import { glyphHeight } from "./vga-font.ts";

export const columns = 80;
export const rows = 25;
const cellWidth = 9;
export const screenWidth = columns * cellWidth;
export const screenHeight = rows * glyphHeight;

/**
 * The VGA palette as Linux's console sets it (drivers/tty/vt/vt.c default_red/grn/blu), indexed by
 * the ANSI colour number: 0-7 normal, 8-15 bright.
 */
const palette = [
  0x000000, 0xaa0000, 0x00aa00, 0xaa5500, 0x0000aa, 0xaa00aa, 0x00aaaa, 0xaaaaaa, 0x555555, 0xff5555,
  0x55ff55, 0xffff55, 0x5555ff, 0xff55ff, 0x55ffff, 0xffffff,
];
/** A cell's colours as one byte, as VGA keeps them: background in the high nibble. */
export const defaultAttribute = 0x07;
/** vgacon's underline cursor: the last two scan lines of a 16-line cell. */
const cursorLines = [14, 15];

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
  private readonly attributes = new Uint8Array(columns * rows).fill(defaultAttribute);
  private cursorCell: number | undefined;
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
    this.attributes.fill(defaultAttribute);
    this.column = 0;
    this.row = 0;
    this.redrawRows(0, rows);
  }

  /** Puts a glyph with its colours (defaultAttribute's layout) in a cell, drawing only a change. */
  setCell(row: number, column: number, code: number, attribute: number): void {
    const at = row * columns + column;
    if (this.cells[at] === code && this.attributes[at] === attribute) return;
    this.cells[at] = code;
    this.attributes[at] = attribute;
    this.drawCell(row, column);
    this.markDirty(row, row + 1);
  }

  /** Where the cursor is drawn, or undefined to hide it (steady: QEMU blinks it, this does not). */
  setCursor(cursor: { row: number; column: number } | undefined): void {
    const cell = cursor && cursor.row * columns + cursor.column;
    if (cell === this.cursorCell) return;
    const previous = this.cursorCell;
    this.cursorCell = cell;
    for (const at of [previous, cell]) {
      if (at === undefined) continue;
      const row = Math.floor(at / columns);
      this.drawCell(row, at % columns);
      this.markDirty(row, row + 1);
    }
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
    this.attributes.copyWithin(0, columns);
    this.attributes.fill(defaultAttribute, (rows - 1) * columns);
    this.redrawRows(0, rows);
  }

  private redrawRows(from: number, to: number): void {
    for (let row = from; row < to; row += 1) {
      for (let column = 0; column < columns; column += 1) this.drawCell(row, column);
    }
    this.markDirty(from, to);
  }

  private drawCell(row: number, column: number): void {
    const cell = row * columns + column;
    const code = this.cells[cell] ?? 0x20;
    const glyph = code * glyphHeight;
    const attribute = this.attributes[cell] ?? defaultAttribute;
    const foreground = palette[attribute & 0x0f] ?? 0;
    const background = palette[attribute >> 4] ?? 0;
    // VGA repeats the eighth column into the ninth for the line-drawing glyphs only (0xc0-0xdf), so
    // that boxes join up; for everything else the ninth column is background.
    const lineGraphic = code >= 0xc0 && code <= 0xdf;
    for (let line = 0; line < glyphHeight; line += 1) {
      const cursor = cell === this.cursorCell && cursorLines.includes(line);
      const bits = cursor ? 0xff : (this.glyphs[glyph + line] ?? 0);
      for (let x = 0; x < cellWidth; x += 1) {
        const bit = x < 8 ? bits & (0x80 >> x) : lineGraphic ? bits & 1 : 0;
        const colour = bit !== 0 ? foreground : background;
        const at = ((row * glyphHeight + line) * screenWidth + column * cellWidth + x) * 4;
        this.pixels[at] = colour >> 16;
        this.pixels[at + 1] = (colour >> 8) & 0xff;
        this.pixels[at + 2] = colour & 0xff;
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
