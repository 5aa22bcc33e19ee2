// The parts of pako's low-level zlib port that zlib-inflater.ts uses (its package types only the high-level API).
declare module "pako/lib/zlib/zstream.js" {
  export default class ZStream {
    input: Uint8Array;
    next_in: number;
    avail_in: number;
    output: Uint8Array;
    next_out: number;
    avail_out: number;
  }
}

declare module "pako/lib/zlib/inflate.js" {
  import type ZStream from "pako/lib/zlib/zstream.js";
  export function inflateInit(stream: ZStream): number;
  export function inflate(stream: ZStream, flush: number): number;
}
