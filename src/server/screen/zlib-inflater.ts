// One zlib stream inflated piece by piece, synchronously: RFB's Zlib encoding compresses every
// rectangle of a connection into one stream, flushed after each (RFC 6143 7.7.2 and QEMU's
// ui/vnc-enc-zlib.c). Node's zlib inflates a stream only asynchronously, which would let rectangles
// that follow a compressed one overtake it; pako's inflate (the one noVNC uses) runs in place.
import { inflate, inflateInit } from "pako/lib/zlib/inflate.js";
import ZStream from "pako/lib/zlib/zstream.js";

const Z_OK = 0;
const Z_BUF_ERROR = -5;

export class ZlibInflater {
  private readonly stream = new ZStream();

  constructor() {
    inflateInit(this.stream);
  }

  /** The next `expected` bytes of the stream, given the compressed piece that holds them; undefined when corrupt. */
  inflate(compressed: Uint8Array, expected: number): Uint8Array | undefined {
    const { stream } = this;
    stream.input = compressed;
    stream.next_in = 0;
    stream.avail_in = compressed.length;
    stream.output = new Uint8Array(expected);
    stream.next_out = 0;
    stream.avail_out = expected;
    // Z_NO_FLUSH: inflate reads all it was given, as far as the room for the output allows.
    const status = inflate(stream, 0);
    if ((status !== Z_OK && status !== Z_BUF_ERROR) || stream.next_out !== expected) return undefined;
    return stream.output;
  }
}
