// Finds output the screen copy may skip. A long run of plain text (printable characters, CR, LF,
// tab, backspace, printed while no escape sequence is open) only prints lines and moves the cursor:
// once it has printed more lines than the screen and its scrollback hold, everything it printed
// before its last that-many lines has scrolled away. So the head of such a run can be replaced by a
// CR without changing the screen or the scrollback, and a `yes` flood costs a parse of the last
// thousand lines instead of every line.
//
// To know where plain text is, this follows the escape-sequence grammar of a VT500 parser (the one
// xterm.js implements) just far enough to tell "no sequence open" from everything else. Where it is
// unsure it counts the bytes as not plain, which only means they are parsed.
//
// WARNING: exact for the whole screen as a scroll region (a shell, and full-screen programs' own
// buffers, which have no scrollback). Plain text printed with a scroll region smaller than the
// screen, or with the cursor below it, may leave a different copy than the real screen.

const ESC = 0x1b;
const CAN = 0x18;
const SUB = 0x1a;
const BEL = 0x07;
const LF = 0x0a;

type State = "ground" | "escape" | "escape-intermediate" | "csi" | "osc" | "string";

/** A stretch of the input to drop (replace with a CR): [start, end). */
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

  /**
   * Scans the next chunks of output, as one stream (the state carries over between calls too), and
   * returns the heads of plain runs inside them that have more than `keepLines` line feeds after them
   * within the run, as offsets into the chunks joined. The chunks are read where they are: a batch
   * of megabytes is never copied to be scanned.
   */
  scan(chunks: readonly Uint8Array[], keepLines: number): Skippable[] {
    const skippable: Skippable[] = [];
    const stream = new JoinedChunks(chunks);
    let runStart = -1;
    let runLineFeeds = 0;
    const endRun = (end: number) => {
      if (runStart >= 0 && runLineFeeds > keepLines) {
        const cut = stream.afterLineFeedsFromEnd(runStart, end, keepLines + 1);
        if (cut > runStart) skippable.push({ start: runStart, end: cut });
      }
      runStart = -1;
      runLineFeeds = 0;
    };
    for (let chunkIndex = 0; chunkIndex < chunks.length; chunkIndex += 1) {
      const bytes = chunks[chunkIndex]!;
      const base = stream.startOf(chunkIndex);
      let index = 0;
      while (index < bytes.length) {
        if (this.state === "ground" && !this.afterC2) {
          if (runStart < 0) runStart = base + index;
          for (; index < bytes.length; index += 1) {
            const kind = groundClass[bytes[index]!]!;
            if (kind === SPECIAL) break;
            if (kind === LINE_FEED) runLineFeeds += 1;
          }
          if (index === bytes.length) break;
          const byte = bytes[index]!;
          // A character from U+00A0..U+00BF is plain; 0xC2 before anything else is not.
          if (byte === 0xc2 && index + 1 < bytes.length && bytes[index + 1]! >= 0xa0) {
            index += 2;
            continue;
          }
        }
        endRun(base + index);
        this.advance(bytes[index]!);
        index += 1;
      }
    }
    endRun(stream.length);
    return skippable;
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

/** Chunks read as the one stream they make, by offsets into it. */
class JoinedChunks {
  private readonly starts: number[] = [];
  readonly length: number;

  constructor(private readonly chunks: readonly Uint8Array[]) {
    let offset = 0;
    for (const chunk of chunks) {
      this.starts.push(offset);
      offset += chunk.length;
    }
    this.length = offset;
  }

  startOf(chunkIndex: number): number {
    return this.starts[chunkIndex]!;
  }

  /**
   * The offset just after the line feed that leaves `lineFeeds - 1` line feeds in [that, end), or
   * `start` when [start, end) has fewer.
   */
  afterLineFeedsFromEnd(start: number, end: number, lineFeeds: number): number {
    let found = 0;
    for (let chunkIndex = this.chunkAt(end - 1); chunkIndex >= 0; chunkIndex -= 1) {
      const chunk = this.chunks[chunkIndex]!;
      const base = this.starts[chunkIndex]!;
      let position = Math.min(chunk.length, end - base);
      while (position > 0) {
        position = chunk.lastIndexOf(LF, position - 1);
        if (position < 0 || base + position < start) break;
        found += 1;
        if (found === lineFeeds) return base + position + 1;
      }
      if (base <= start) break;
    }
    return start;
  }

  /** The chunk holding `offset` (the last with bytes at or before it). */
  private chunkAt(offset: number): number {
    let index = this.starts.length - 1;
    while (index > 0 && this.starts[index]! > offset) index -= 1;
    return index;
  }
}
