// Which characters take two columns of a terminal, as the BFF's screen copy counts them: xterm.js's
// default Unicode version 6 widths (its UnicodeV6, the East Asian Wide and Fullwidth ranges of
// Unicode 6). The wall's text is the screen copy's rows, where a wide character is one character of
// the string but two cells of the screen, so the miniature must give it two columns itself.

/** [first, last] code points, inclusive, in order. */
const wideRanges: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f], // Hangul Jamo initial consonants
  [0x2329, 0x232a], // angle brackets
  [0x2e80, 0x3029], // CJK radicals, punctuation (up to the ideographic tone marks, which combine)
  [0x3030, 0x303e], // the rest of CJK punctuation; U+303F is narrow
  [0x3040, 0x3098], // Hiragana (up to the combining sound marks)
  [0x309b, 0xa4cf], // Katakana, Bopomofo, CJK ideographs, Yi
  [0xac00, 0xd7a3], // Hangul syllables
  [0xf900, 0xfaff], // CJK compatibility ideographs
  [0xfe10, 0xfe19], // vertical forms
  [0xfe30, 0xfe6f], // CJK compatibility forms, small forms
  [0xff00, 0xff60], // fullwidth forms
  [0xffe0, 0xffe6], // fullwidth signs
  [0x20000, 0x2fffd], // CJK extension B and after
  [0x30000, 0x3fffd],
];

export function isWide(codePoint: number): boolean {
  let low = 0;
  let high = wideRanges.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const [first, last] = wideRanges[middle]!;
    if (codePoint < first) high = middle - 1;
    else if (codePoint > last) low = middle + 1;
    else return true;
  }
  return false;
}

/** A row cut into runs of narrow text and single wide characters, in order. */
export type RowPart = { text: string; wide: boolean };

export function rowParts(row: string): RowPart[] {
  const parts: RowPart[] = [];
  let narrow = "";
  for (const char of row) {
    if (!isWide(char.codePointAt(0)!)) {
      narrow += char;
      continue;
    }
    if (narrow) parts.push({ text: narrow, wide: false });
    narrow = "";
    parts.push({ text: char, wide: true });
  }
  if (narrow) parts.push({ text: narrow, wide: false });
  return parts;
}

/** How many cells the widest of `rows` takes. */
export function screenColumns(rows: readonly string[]): number {
  let widest = 0;
  for (const row of rows) {
    let cells = 0;
    for (const char of row) cells += isWide(char.codePointAt(0)!) ? 2 : 1;
    widest = Math.max(widest, cells);
  }
  return widest;
}
