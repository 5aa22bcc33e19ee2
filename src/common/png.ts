// A PNG of (part of) an image kept four bytes a pixel, red, green, blue and one unused, as the
// screens here are: 8-bit RGB, no interlace, each row unfiltered, the whole deflated (PNG's own
// format: signature, IHDR, IDAT, IEND). libvirt's screenshot of a guest's screen is one; the BFF
// sends changed parts of a screen to browsers as these too.
import { crc32, deflateSync } from "node:zlib";

const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface Image {
  width: number;
  height: number;
  /** Four bytes a pixel, row after row: red, green, blue, unused. */
  pixels: Uint8Array;
}

export interface Area {
  x: number;
  y: number;
  width: number;
  height: number;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, tail]);
}

/** `level`: zlib's, 1 (fastest) to 9 (smallest). */
export function encodePng(image: Image, area: Area = { x: 0, y: 0, ...image }, level = 6): Buffer {
  const { width, height } = area;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8); // bits per channel
  header.writeUInt8(2, 9); // colour type: RGB
  const rowBytes = 1 + width * 3; // a row's first byte is its filter: none
  const rows = Buffer.alloc(height * rowBytes);
  const { pixels } = image;
  for (let y = 0; y < height; y += 1) {
    let from = ((area.y + y) * image.width + area.x) * 4;
    let to = y * rowBytes + 1;
    for (let x = 0; x < width; x += 1, from += 4, to += 3) {
      rows[to] = pixels[from]!;
      rows[to + 1] = pixels[from + 1]!;
      rows[to + 2] = pixels[from + 2]!;
    }
  }
  return Buffer.concat([
    signature,
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows, { level })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}
