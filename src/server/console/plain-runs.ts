// Finds output the screen copy may skip. A long run of plain text (printable characters, CR, LF,
// tab, backspace, printed while no escape sequence is open) only prints lines and moves the cursor:
// once it has printed more lines than the screen and its scrollback hold, everything it printed
// before its last that-many lines has scrolled away. So the head of such a run can be replaced by a
// CR without changing the screen or the scrollback, and a `yes` flood costs a parse of the last
// thousand lines instead of every line. Output is scanned once, as it arrives, a chunk at a time;
// positions are offsets in the console's output stream.
//
// To know where plain text is, this follows the escape-sequence grammar of a VT500 parser (the one
// xterm.js implements) just far enough to tell "no sequence open" from everything else. Where it is
// unsure it counts the bytes as not plain, which only means they are parsed.
//
// WARNING: exact for the whole screen as a scroll region (a shell, and full-screen programs' own
// buffers, which have no scrollback). Plain text printed with a scroll region smaller than the
// screen, or with the cursor below it, may leave a different copy than the real screen. So may
// lines ended by a bare LF (a guest whose tty does not map it to CR LF): after one the cursor keeps
// its column, and the CR standing in for a dropped head puts it at the line's start.

const ESC = 0x1b;
const CAN = 0x18;
const SUB = 0x1a;
const BEL = 0x07;
const LF = 0x0a;

type State = "ground" | "escape" | "escape-intermediate" | "csi" | "osc" | "string";

/** A stretch of the stream to drop (replace with a CR): [start, end). */
export interface Skippable {
  start: number;
  end: number;
}

// What a byte is while no sequence is open: most are plain, and a table keeps the loop over them fast.
const PLAIN = 0;
const LINE_FEED = 1;
const SPECIAL = 2;
const groundClass = new Uint8Array(256).fill(SPECIAL);
groundClass.fill(PLAIN, 0x20, 0x7f);
groundClass.fill(PLAIN, 0x80, 0x100);
for (const control of [0x08, 0x09, 0x0d]) groundClass[control] = PLAIN;
groundClass[LF] = LINE_FEED;
// 0xC2 starts U+0080..U+00BF, among them the C1 controls U+0080..U+009F.
groundClass[0xc2] = SPECIAL;

export class PlainRunFinder {
  private state: State = "ground";
  /** The previous byte was 0xC2, which starts a C1 control (U+0080..U+009F) if 0x80..0x9F follows. */
  private afterC2 = false;
  /** Where the stream scanned so far ends. */
  private scanned = 0;
  /** The plain run still open at the end of what was scanned: where it starts, -1 when none. */
  private runStart = -1;
  /**
   * The open run's last `keepLines + 1` line feeds, as the positions just after each (a ring): the
   * oldest is where the lines the copy must parse begin.
   */
  private lineEnds: Float64Array;
  private lineEndCount = 0;
  private nextLineEnd = 0;
  /** Runs that ended with a head to skip, and where each run ended (its cut counted lines up to there). */
  private readonly closed: (Skippable & { runEnd: number })[] = [];

  constructor(private keepLines: number) {
    this.lineEnds = new Float64Array(keepLines + 1);
  }

  /** A new screen size: the run open now is left whole (parsed), and later ones keep this many lines. */
  setKeepLines(keepLines: number): void {
    this.endRun(this.scanned);
    this.keepLines = keepLines;
    this.lineEnds = new Float64Array(keepLines + 1);
  }

  /** Scans the next chunk of the stream (sequences and runs carry over from the one before). */
  scan(bytes: Uint8Array): void {
    const base = this.scanned;
    const words = new WordView(bytes);
    let index = 0;
    while (index < bytes.length) {
      if (this.state === "ground" && !this.afterC2) {
        if (this.runStart < 0) this.runStart = base + index;
        index = this.plainUntil(bytes, words, index);
        if (index === bytes.length) break;
        const byte = bytes[index]!;
        // A character from U+00A0..U+00BF is plain; 0xC2 before anything else is not.
        if (byte === 0xc2 && index + 1 < bytes.length && bytes[index + 1]! >= 0xa0) {
          index += 2;
          continue;
        }
      }
      this.endRun(base + index);
      this.advance(bytes[index]!);
      index += 1;
    }
    this.scanned = base + bytes.length;
  }

  /**
   * Where the plain text from `from` ends: the first byte that is not plain, or the chunk's end.
   * After a line feed that ended a line of some length, the whole words of four printable bytes that
   * follow are passed at once (a text line is mostly those): the scan is paid on every byte a
   * console prints.
   */
  private plainUntil(bytes: Uint8Array, words: WordView, from: number): number {
    const base = this.scanned;
    let index = from;
    let lineStart = index;
    let tryWords = true;
    while (index < bytes.length) {
      if (tryWords && words.isWordStart(index)) {
        index = words.skipPrintable(index);
        tryWords = false;
        if (index === bytes.length) break;
      }
      const kind = groundClass[bytes[index]!]!;
      if (kind === SPECIAL) return index;
      if (kind === LINE_FEED) {
        this.lineEnded(base + index + 1);
        // Short lines (`yes`) have no whole word to pass: trying would cost more than it saves.
        tryWords = index - lineStart >= minLineForWords;
        lineStart = index + 1;
      }
      index += 1;
    }
    return index;
  }

  /**
   * Hands over, and forgets, the stretches found to skip that end at or before `upTo`: those of runs
   * that ended, and, when nothing after `upTo` was scanned, the open run's head (which is not
   * offered again: the run goes on from its end).
   */
  takeSkippable(upTo: number): Skippable[] {
    let count = 0;
    // A run that ended after `upTo` counted lines printed after it: its cut is not one `upTo` may take.
    while (count < this.closed.length && this.closed[count]!.runEnd <= upTo) count += 1;
    const taken: Skippable[] = this.closed.splice(0, count).map(({ start, end }) => ({ start, end }));
    const cut = this.openRunCut();
    if (upTo >= this.scanned && cut !== undefined) {
      taken.push({ start: this.runStart, end: cut });
      this.runStart = cut;
    }
    return taken;
  }

  /** The stream before `position` was parsed: nothing before it may be skipped any more. */
  forgetBefore(position: number): void {
    while (this.closed[0] && this.closed[0].end <= position) this.closed.shift();
    if (this.closed[0] && this.closed[0].start < position) this.closed[0].start = position;
    if (this.runStart >= 0 && this.runStart < position) this.runStart = position;
  }

  private lineEnded(position: number): void {
    this.lineEnds[this.nextLineEnd] = position;
    this.lineEndCount += 1;
    this.nextLineEnd += 1;
    if (this.nextLineEnd === this.lineEnds.length) this.nextLineEnd = 0;
  }

  /** After the line feed that leaves `keepLines` in the open run, if it has more than that. */
  private openRunCut(): number | undefined {
    if (this.runStart < 0 || this.lineEndCount <= this.keepLines) return undefined;
    const cut = this.lineEnds[this.nextLineEnd]!;
    return cut > this.runStart ? cut : undefined;
  }

  /** The open run ends at `runEnd` (the stream position of what ends it). */
  private endRun(runEnd: number): void {
    if (this.runStart < 0) return;
    const cut = this.openRunCut();
    if (cut !== undefined) this.closed.push({ start: this.runStart, end: cut, runEnd });
    this.runStart = -1;
    this.lineEndCount = 0;
    this.nextLineEnd = 0;
  }

  private advance(byte: number): void {
    const afterC2 = this.afterC2;
    this.afterC2 = byte === 0xc2;
    if (byte === CAN || byte === SUB) {
      this.state = "ground";
      return;
    }
    if (byte === ESC) {
      this.state = "escape";
      return;
    }
    if (afterC2 && byte >= 0x80 && byte <= 0x9f) {
      this.state = c1Transition(byte, this.state);
      return;
    }
    switch (this.state) {
      case "ground":
        return;
      case "escape":
        if (byte === 0x5b) this.state = "csi";
        else if (byte === 0x5d) this.state = "osc";
        else if (byte === 0x50 || byte === 0x58 || byte === 0x5e || byte === 0x5f) this.state = "string";
        else if (byte >= 0x20 && byte <= 0x2f) this.state = "escape-intermediate";
        else if (byte >= 0x30 && byte <= 0x7e) this.state = "ground";
        return;
      case "escape-intermediate":
        if (byte >= 0x30 && byte <= 0x7e) this.state = "ground";
        return;
      case "csi":
        if (byte >= 0x40 && byte <= 0x7e) this.state = "ground";
        return;
      case "osc":
        if (byte === BEL) this.state = "ground";
        return;
      case "string":
        return;
    }
  }
}

function c1Transition(code: number, state: State): State {
  if (code === 0x9b) return "csi";
  if (code === 0x9d) return "osc";
  if (code === 0x90 || code === 0x98 || code === 0x9e || code === 0x9f) return "string";
  if (code === 0x9c) return "ground";
  return state;
}

const noWords = new Int32Array(0);
/** The shortest line after which the next is scanned a word at a time. */
const minLineForWords = 16;

/** A chunk's 4-byte-aligned words, to test four bytes at once. */
class WordView {
  private readonly words: Int32Array;
  /** The index in the chunk of its first aligned byte, and of the byte after its last word. */
  private readonly first: number;
  private readonly last: number;

  constructor(bytes: Uint8Array) {
    const first = (4 - (bytes.byteOffset & 3)) & 3;
    const count = first < bytes.length ? (bytes.length - first) >>> 2 : 0;
    this.first = count > 0 ? first : bytes.length;
    this.last = this.first + count * 4;
    this.words = count > 0 ? new Int32Array(bytes.buffer, bytes.byteOffset + first, count) : noWords;
  }

  isWordStart(index: number): boolean {
    return index >= this.first && index < this.last && ((index - this.first) & 3) === 0;
  }

  /** From the word starting at `index`, past every whole word that is all printable. */
  skipPrintable(index: number): number {
    const { words } = this;
    let word = (index - this.first) >>> 2;
    while (word < words.length && allPrintable(words[word]!)) word += 1;
    return this.first + word * 4;
  }
}

/**
 * No byte of the word is below 0x20 or is 0x7F or 0xC2 (the bit tricks of "Bit Twiddling Hacks":
 * hasless and haszero, exact in saying whether, never in saying where).
 */
function allPrintable(word: number): boolean {
  const below20 = ((word - 0x20202020) | 0) & ~word;
  const del = word ^ 0x7f7f7f7f;
  const c2 = word ^ 0xc2c2c2c2;
  const zeroByte = (((del - 0x01010101) | 0) & ~del) | (((c2 - 0x01010101) | 0) & ~c2);
  return ((below20 | zeroByte) & 0x80808080) === 0;
}
