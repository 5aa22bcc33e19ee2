// Where a Unicode character sits in the VGA font. The VGA BIOS's font is code page 437, and Linux's
// VGA console maps Unicode onto it with its default table (drivers/tty/vt/cp437.uni), so a UTF-8
// "─" or "é" a program prints shows as the glyph a real guest's screen draws for it.

// Code page 437, glyph by glyph (0x00 is blank; 0x01-0x1f and 0x7f are the graphic characters).
const table =
  " ☺☻♥♦♣♠•◘○◙♂♀♪♫☼►◄↕‼¶§▬↨↑↓→←∟↔▲▼" +
  " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~⌂" +
  "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐" +
  "└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0";

const codes = new Map<string, number>();
for (const [code, character] of [...table].entries()) {
  if (code !== 0 && !codes.has(character)) codes.set(character, code);
}
// What cp437.uni maps besides the glyphs' own characters (a few look-alikes programs print).
codes.set("\u25cf", 0x07); // ● (systemctl status)
codes.set("\u2014", 0xc4); // —

/** The font's glyph for a character; 0x3f ("?") where the font has none, as without a mapping. */
export function cp437Code(character: string): number {
  if (character === "" || character === " ") return 0x20;
  return codes.get(character) ?? 0x3f;
}
