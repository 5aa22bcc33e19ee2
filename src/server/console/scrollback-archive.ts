// Scrollback moved out of the screen copy's terminal while the console is quiet. xterm.js keeps
// every cell of a row in typed arrays, 12 bytes a cell whatever it shows (about 1.5 KB a row at 80
// columns, three times that once a wide viewer fitted the guest); serialized, a row of shell output
// takes about 80 bytes.
//
// The rows are kept in chunks, oldest first, each serialized on its own (its styles start from the
// default and are reset at its end), so that the oldest chunk can be dropped without changing how the
// others look.

/** Rows per chunk (a few more to end on a whole line): the archive keeps up to that many extra. */
export const archiveChunkRows = 100;
const resetStyle = "\x1b[0m";

interface Chunk {
  bytes: Buffer;
  rows: number;
}

export class ScrollbackArchive {
  private chunks: Chunk[] = [];
  private rowCount = 0;

  get rows(): number {
    return this.rowCount;
  }

  /** Bytes held. */
  get byteLength(): number {
    return this.chunks.reduce((total, chunk) => total + chunk.bytes.length, 0);
  }

  /**
   * Adds rows below the ones archived: `serialized` is their serialization, starting from the
   * default style, not ending with a line break.
   */
  append(serialized: string, rows: number): void {
    const last = this.chunks.at(-1);
    // Quiet moments after a few lines each would otherwise leave many tiny chunks.
    if (last && last.rows + rows <= archiveChunkRows) {
      this.chunks[this.chunks.length - 1] = {
        bytes: exactCopy(`${last.bytes.toString("utf8")}\r\n${serialized}${resetStyle}`),
        rows: last.rows + rows,
      };
    } else {
      this.chunks.push({ bytes: exactCopy(serialized + resetStyle), rows });
    }
    this.rowCount += rows;
  }

  /** Drops the oldest chunks that are not needed to keep `rows` rows. */
  keepRows(rows: number): void {
    while (this.chunks.length > 0 && this.rowCount - this.chunks[0]!.rows >= Math.max(0, rows)) {
      this.rowCount -= this.chunks.shift()!.rows;
    }
  }

  /**
   * What a terminal writes before the serialization of the rest of the screen to end up as if it had
   * printed it all: the archived rows, then enough line feeds to scroll them all off a screen of
   * `screenRows`, and the cursor home, where a fresh terminal's would be.
   */
  serialize(screenRows: number): string {
    if (this.chunks.length === 0) return "";
    const rows = this.chunks.map((chunk) => chunk.bytes.toString("utf8")).join("\r\n");
    return `${rows}\r${"\n".repeat(screenRows)}\x1b[H`;
  }

  clear(): void {
    this.chunks = [];
    this.rowCount = 0;
  }
}

/** The string's UTF-8 bytes in memory of their own (a small Buffer would pin a shared 8 KiB pool). */
function exactCopy(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text, "utf8"));
  bytes.write(text, "utf8");
  return bytes;
}
