// Finds output the screen copy may skip. A long run of plain text (text and the controls that only
// move the cursor or ring the bell, printed while no escape sequence is open) only prints lines and
// moves the cursor: once it has printed enough lines (`keepLines`, which screen.ts sets from the
// screen and its scrollback), everything it printed before its last that-many lines has scrolled
// away, and what the screen held before it with them. So the head of such a run can be replaced by
// a CR without changing the screen or the scrollback, and a `yes` flood costs a parse of the last
// thousand lines instead of every line. Output is scanned once, as it arrives, a chunk at a time;
// positions are offsets in the console's output stream.
//
// Plain text is found with `Buffer.indexOf`, a native search, for the few bytes that change what
// later text looks like: ESC, which opens every 7-bit sequence; SO and SI, which switch the
// character set; and 0xC2 before 0x80..0x9F, a C1 control in UTF-8. Every other byte is plain: the
// C0 controls xterm.js acts on without them (BS, HT, LF, VT, FF, CR, BEL) move the cursor, scroll or
// ring, and it ignores the rest and DEL. From each byte found, this follows the escape-sequence
// grammar of a VT500 parser (the one xterm.js implements) just far enough to know when the sequence
// ends. Where it is unsure it counts the bytes as not plain, which only means they are parsed. A
// run's lines are counted only when a cut is asked for, back from its end: a flood is not walked a
// line at a time.
//
// WARNING: exact for the whole screen as a scroll region (a shell, and full-screen programs' own
// buffers, which have no scrollback). Plain text printed with a scroll region smaller than the
// screen, or with the cursor below it, may leave a different copy than the real screen. So may
// lines ended by a bare LF (a guest whose tty does not map it to CR LF): after one the cursor keeps
// its column, and the CR standing in for a dropped head puts it at the line's start. VT and FF
// scroll as LF does but are not counted as lines, which only keeps more.

const ESC = 0x1b;
const CAN = 0x18;
const SUB = 0x1a;
const BEL = 0x07;
const LF = 0x0a;
const SO = 0x0e;
const SI = 0x0f;
const C2 = 0xc2;

type State = "ground" | "escape" | "escape-intermediate" | "csi" | "osc" | "string";

/** A stretch of the stream to drop (replace with a CR): [start, end). */
export interface Skippable {
  start: number;
  end: number;
}

/** A chunk scanned, and where it starts in the stream. */
interface Chunk {
  start: number;
  bytes: Buffer;
}

export class PlainRunFinder {
  private state: State = "ground";
  /** The previous byte was 0xC2, which starts a C1 control (U+0080..U+009F) if 0x80..0x9F follows. */
  private afterC2 = false;
  /** Where the stream scanned so far ends. */
  private scanned = 0;
  /** The plain run still open at the end of what was scanned: where it starts, -1 when none. */
  private runStart = -1;
  /** The last chunks scanned, from the one holding the open run's start (never copied). */
  private readonly chunks: Chunk[] = [];
  /** Runs that ended with a head to skip, and where each run ended (its cut counted lines up to there). */
  private readonly closed: (Skippable & { runEnd: number })[] = [];

  constructor(private keepLines: number) {}

  /** A new screen size: the run open now is left whole (parsed), and later ones keep this many lines. */
  setKeepLines(keepLines: number): void {
    this.endRun(this.scanned);
    this.keepLines = keepLines;
  }

  /** Scans the next chunk of the stream (sequences and runs carry over from the one before). */
  scan(chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    const base = this.scanned;
    const special = new SpecialBytes(bytes);
    const firstNeeded = this.runStart >= 0 ? this.runStart : base;
    while (this.chunks[0] && this.chunks[0].start + this.chunks[0].bytes.length <= firstNeeded)
      this.chunks.shift();
    this.chunks.push({ start: base, bytes });
    let index = 0;
    while (index < bytes.length) {
      if (this.state === "ground" && !this.afterC2) {
        if (this.runStart < 0) this.runStart = base + index;
        index = special.next(index);
        if (index === bytes.length) break;
      }
      this.endRun(base + index);
      this.advance(bytes[index]!);
      index += 1;
    }
    this.scanned = base + bytes.length;
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
    // Counting the open run's lines back is work: only when its head may be taken.
    const cut = upTo >= this.scanned ? this.openRunCut(this.scanned) : undefined;
    if (cut !== undefined) {
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

  /**
   * After the line feed that leaves `keepLines` in the open run ending at `runEnd`, if it has more
   * than that: counted back from the end, so a flood's lines are looked at only as far back as its
   * last ones.
   */
  private openRunCut(runEnd: number): number | undefined {
    // Each line is at least its line feed: a shorter run cannot have a line to drop.
    if (this.runStart < 0 || runEnd - this.runStart <= this.keepLines) return undefined;
    let lineFeeds = 0;
    for (let index = this.chunks.length - 1; index >= 0; index -= 1) {
      const { start, bytes } = this.chunks[index]!;
      if (start + bytes.length <= this.runStart) break;
      const lowest = Math.max(this.runStart - start, 0);
      const highest = Math.min(runEnd - start, bytes.length) - 1;
      for (let at = lastLineFeed(bytes, highest, lowest); at >= 0; at = lastLineFeed(bytes, at - 1, lowest)) {
        lineFeeds += 1;
        if (lineFeeds > this.keepLines) return start + at + 1 > this.runStart ? start + at + 1 : undefined;
      }
    }
    return undefined;
  }

  /** The open run ends at `runEnd` (the stream position of what ends it). */
  private endRun(runEnd: number): void {
    if (this.runStart < 0) return;
    const cut = this.openRunCut(runEnd);
    if (cut !== undefined) this.closed.push({ start: this.runStart, end: cut, runEnd });
    this.runStart = -1;
  }

  private advance(byte: number): void {
    const afterC2 = this.afterC2;
    this.afterC2 = byte === C2;
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

// A byte the next plain stretch may end at: what SpecialBytes looks at closely.
const mayEndPlain = new Uint8Array(256);
for (const byte of [ESC, SO, SI, C2]) mayEndPlain[byte] = 1;
/**
 * How far a JavaScript loop looks before a native search takes over: a call into `indexOf` costs
 * about as much as reading a few dozen bytes here, and the next sequence or line end is often that
 * close (coloured output, short lines).
 */
const nearBytes = 16;

/**
 * Where the next byte that is not plain lies in a chunk: looked for nearby first, then with one
 * native search per kind of byte, each from where the last search for it ended, so a long chunk is
 * read once per kind however many are found.
 */
class SpecialBytes {
  private nextEsc = -1;
  private nextShiftOut = -1;
  private nextShiftIn = -1;
  private nextC1 = -1;

  constructor(private readonly bytes: Buffer) {}

  /** The first byte at or after `from` that is not plain, or the chunk's length. */
  next(from: number): number {
    const { bytes } = this;
    const near = Math.min(bytes.length, from + nearBytes);
    for (let at = from; at < near; at += 1) {
      if (mayEndPlain[bytes[at]!] === 1 && isSpecialAt(bytes, at)) return at;
    }
    if (near === bytes.length) return near;
    if (this.nextEsc < near) this.nextEsc = found(bytes.indexOf(ESC, near));
    if (this.nextShiftOut < near) this.nextShiftOut = found(bytes.indexOf(SO, near));
    if (this.nextShiftIn < near) this.nextShiftIn = found(bytes.indexOf(SI, near));
    if (this.nextC1 < near) this.nextC1 = c1From(bytes, near);
    return Math.min(this.nextEsc, this.nextShiftOut, this.nextShiftIn, this.nextC1, bytes.length);
  }
}

/** ESC, SO, SI, or a 0xC2 that starts a C1 control or ends the chunk (what follows it is unknown). */
function isSpecialAt(bytes: Buffer, at: number): boolean {
  if (bytes[at] !== C2) return true;
  const following = bytes[at + 1];
  return following === undefined || (following >= 0x80 && following <= 0x9f);
}

function c1From(bytes: Buffer, from: number): number {
  for (let at = bytes.indexOf(C2, from); at >= 0; at = bytes.indexOf(C2, at + 1)) {
    if (isSpecialAt(bytes, at)) return at;
  }
  return Infinity;
}

const found = (index: number) => (index < 0 ? Infinity : index);

/** The last LF in bytes[lowest..from], -1 if none: looked for nearby first, as above. */
function lastLineFeed(bytes: Buffer, from: number, lowest: number): number {
  const near = Math.max(lowest - 1, from - nearBytes);
  for (let at = from; at > near; at -= 1) if (bytes[at] === LF) return at;
  if (near < lowest) return -1;
  const at = bytes.lastIndexOf(LF, near);
  return at >= lowest ? at : -1;
}
