// The VGA BIOS's 8x16 font: the glyphs a real guest's text console is drawn with. QEMU's guests get
// their font from SeaBIOS's VGA BIOS, which loads it into the card at boot, so the emulator draws its
// sandboxed guests' screens with the same bytes, read from Debian's `seabios` package (it comes with
// qemu-system-x86). The font sits at no fixed offset: it is found by its glyph for "A".
import { readFileSync } from "node:fs";

export const vgaBiosPath = "/usr/share/seabios/vgabios-stdvga.bin";
export const glyphHeight = 16;

const glyphA = Buffer.from([0, 0, 0x10, 0x38, 0x6c, 0xc6, 0xc6, 0xfe, 0xc6, 0xc6, 0xc6, 0xc6, 0, 0, 0, 0]);
const glyphZero = Buffer.from([0, 0, 0x3c, 0x66, 0xc3, 0xc3, 0xdb, 0xdb, 0xc3, 0xc3, 0x66, 0x3c, 0, 0, 0, 0]);

/** 256 glyphs of 16 rows, a byte a row (bit 7 leftmost); or why there is none. */
export function loadVgaFont(path = vgaBiosPath): { glyphs: Uint8Array } | { problem: string } {
  let bios: Buffer;
  try {
    bios = readFileSync(path);
  } catch {
    return { problem: `no VGA BIOS at ${path} to draw text screens with (apt-get install seabios)` };
  }
  const at = bios.indexOf(glyphA) - "A".charCodeAt(0) * glyphHeight;
  const font = at >= 0 ? bios.subarray(at, at + 256 * glyphHeight) : Buffer.alloc(0);
  const zero = font.subarray("0".charCodeAt(0) * glyphHeight, ("0".charCodeAt(0) + 1) * glyphHeight);
  if (font.length !== 256 * glyphHeight || !zero.equals(glyphZero)) {
    return { problem: `${path} holds no 8x16 font this emulator recognizes` };
  }
  return { glyphs: Uint8Array.from(font) };
}
