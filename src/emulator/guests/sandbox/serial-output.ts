// What a real guest's ttyS0 does to what the boot writes to it: termios OPOST|ONLCR, the kernel's
// default, sends each line feed as CR LF. The boot's own lines (the service manager, cloud-init and
// what runcmd prints, before the console's shell) are written to the line directly, and a bare LF
// would reach the screen as a staircase. Once the console's shell runs, everything passes its pty,
// whose termios the programs themselves set (vim turns ONLCR off and moves down a row with a bare
// LF): from then on the bytes pass as they are. A CR LF is left alone: ONLCR would make it CR CR LF,
// which a terminal draws the same.
import { Transform, type TransformCallback } from "node:stream";

const carriageReturn = 0x0d;
const lineFeed = 0x0a;

export class SerialOutputProcessing extends Transform {
  /** The last byte of the previous chunk: a CR there makes an LF that opens this one no bare LF. */
  private lastByte = -1;
  private shellRuns = false;

  /** The boot is over and the console's shell writes through its pty from now on. */
  shellStarted(): void {
    this.shellRuns = true;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.shellRuns) {
      done(null, chunk);
      return;
    }
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
