// What a real guest's ttyS0 does to everything written to it: termios OPOST|ONLCR, the kernel's
// default, sends each line feed as CR LF. Whatever the console's shell prints has already passed its
// pty, which did the same; the boot's own lines (the service manager, cloud-init and what runcmd
// prints, before the console's shell) are written to the line directly, and a bare LF would reach
// the screen as a staircase. A CR LF is left alone: ONLCR would make it CR CR LF, which a terminal
// draws the same.
import { Transform, type TransformCallback } from "node:stream";

const carriageReturn = 0x0d;
const lineFeed = 0x0a;

export class SerialOutputProcessing extends Transform {
  /** The last byte of the previous chunk: a CR there makes an LF that opens this one no bare LF. */
  private lastByte = -1;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const previous = this.lastByte;
    this.lastByte = chunk.at(-1) ?? previous;
    const bare = bareLineFeeds(chunk, previous);
    if (bare === 0) {
      done(null, chunk);
      return;
    }
    const out = Buffer.allocUnsafe(chunk.length + bare);
    let written = 0;
    let before = previous;
    for (const byte of chunk) {
      if (byte === lineFeed && before !== carriageReturn) out[written++] = carriageReturn;
      out[written++] = byte;
      before = byte;
    }
    done(null, out);
  }
}

function bareLineFeeds(chunk: Buffer, previous: number): number {
  let count = 0;
  for (let at = chunk.indexOf(lineFeed); at !== -1; at = chunk.indexOf(lineFeed, at + 1)) {
    if ((at === 0 ? previous : chunk[at - 1]) !== carriageReturn) count += 1;
  }
  return count;
}
