// Test helper: the text on a VGA text-mode screen (720x400, 80x25 cells of 9x16), read back from its
// pixels with the VGA BIOS's font, which both QEMU's guests and the sandboxed ones are drawn with.
import type { Framebuffer } from "../../server/screen/rfb-client.ts";
import { loadVgaFont } from "../guests/screen/vga-font.ts";

let lookup: Map<string, string> | undefined;

function glyphLookup(): Map<string, string> {
  if (lookup) return lookup;
  const font = loadVgaFont();
  if ("problem" in font) throw new Error(font.problem);
  lookup = new Map();
  // Printable ASCII first: where two codes share a glyph, the letter is the one meant.
  const codes = [...Array(0x5f).keys()].map((index) => index + 0x20);
  for (const code of codes) {
    const key = Buffer.from(font.glyphs.subarray(code * 16, code * 16 + 16)).toString("hex");
    if (!lookup.has(key)) lookup.set(key, String.fromCharCode(code));
  }
  return lookup;
}

/** The screen's rows as text, trailing blanks left out; "?" for a cell no printable glyph matches. */
export function screenText(screen: Framebuffer): string[] {
  if (screen.width !== 720 || screen.height !== 400) return [];
  const glyphs = glyphLookup();
  const rows: string[] = [];
  for (let row = 0; row < 25; row += 1) {
    let text = "";
    for (let column = 0; column < 80; column += 1) {
      const bits = Buffer.alloc(16);
      for (let line = 0; line < 16; line += 1) {
        for (let x = 0; x < 8; x += 1) {
          const at = ((row * 16 + line) * 720 + column * 9 + x) * 4;
          // Light grey on black: any bright channel is ink.
          if ((screen.pixels[at] ?? 0) > 0x40) bits[line] = (bits[line] ?? 0) | (0x80 >> x);
        }
      }
      text += glyphs.get(bits.toString("hex")) ?? "?";
    }
    rows.push(text.trimEnd());
  }
  return rows;
}
