// tty1 as Linux's virtual terminal keeps it: 80x25 cells, interpreted from what programs write to it.
// Linux's console understands a dialect of VT102 and ECMA-48 (console_codes(4)); xterm.js, the terminal
// the BFF keeps its console screens with, understands all of it that bash, readline, less and vim
// send with TERM=linux. Its cells are drawn into the VGA text screen as vgacon does: each character's
// glyph from the font (cp437.ts), its colours as VGA attributes, bold as the bright colours, the
// cursor as an underline. It lives as long as the guest's tty1 does, whether anyone watches or not,
// as a real console's screen changes with nobody looking.
import headlessPackage, { type IBufferCell } from "@xterm/headless";
import { cp437Code } from "./cp437.ts";
import { columns, defaultAttribute, rows, type TextScreen } from "./text-screen.ts";

// CommonJS that Node cannot name statically (as in server/console/screen.ts).
const { Terminal } = headlessPackage;

export class LinuxVt {
  private readonly terminal = new Terminal({ cols: columns, rows, scrollback: 0, allowProposedApi: true });
  private readonly cell: IBufferCell | undefined;
  private screen: TextScreen | undefined;

  /** `changed` is called once what was written has been parsed (and drawn, when there is a screen). */
  constructor(private readonly changed: () => void) {
    this.cell = this.terminal.buffer.active.getNullCell();
    this.terminal.onWriteParsed(() => {
      this.draw();
      this.changed();
    });
  }

  write(data: Uint8Array | string): void {
    this.terminal.write(data);
  }

  /** DECCKM: the arrow keys send ESC O A rather than ESC [ A (console_codes(4), `ESC [ ? 1 h`). */
  get applicationCursorKeys(): boolean {
    return this.terminal.modes.applicationCursorKeysMode;
  }

  /** Draws into `screen` from now on, starting with what the terminal shows now. */
  showOn(screen: TextScreen): void {
    this.screen = screen;
    this.draw();
  }

  dispose(): void {
    this.terminal.dispose();
  }

  private draw(): void {
    const screen = this.screen;
    if (!screen) return;
    const buffer = this.terminal.buffer.active;
    for (let row = 0; row < rows; row += 1) {
      const line = buffer.getLine(buffer.viewportY + row);
      for (let column = 0; column < columns; column += 1) {
        const cell = line?.getCell(column, this.cell);
        if (!cell) screen.setCell(row, column, 0x20, defaultAttribute);
        else screen.setCell(row, column, cp437Code(cell.getChars()), attributeOf(cell));
      }
    }
    // Always shown: xterm.js keeps DECTCEM (ESC [ ? 25 l) out of its public API.
    screen.setCursor({ row: buffer.cursorY, column: Math.min(buffer.cursorX, columns - 1) });
  }
}

/** A cell's colours as a VGA attribute: ANSI colours 0-15; others, and RGB, as the defaults. */
function attributeOf(cell: IBufferCell): number {
  let foreground = cell.isFgPalette() && cell.getFgColor() < 16 ? cell.getFgColor() : 7;
  const background = cell.isBgPalette() && cell.getBgColor() < 8 ? cell.getBgColor() : 0;
  // Linux shows bold as intensity: the bright half of the palette.
  if (cell.isBold() && foreground < 8) foreground += 8;
  // Reverse video swaps them; VGA has eight background colours.
  if (cell.isInverse()) return ((foreground & 7) << 4) | background;
  return foreground | (background << 4);
}
