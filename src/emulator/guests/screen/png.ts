// A PNG of an RGBA image, as libvirt's screenshot of a guest's screen is one: 8-bit RGB, no
// interlace, each row unfiltered, the whole deflated (PNG's own format: signature, IHDR, IDAT, IEND).
import { crc32, deflateSync } from "node:zlib";

const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, tail]);
}

export function encodePng(width: number, height: number, rgba: Uint8Array): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8); // bits per channel
  header.writeUInt8(2, 9); // colour type: RGB
  const rows = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y += 1) {
    const row = y * (1 + width * 3); // its first byte is the filter: none
    for (let x = 0; x < width; x += 1) {
      const from = (y * width + x) * 4;
      rows[row + 1 + x * 3] = rgba[from] ?? 0;
      rows[row + 2 + x * 3] = rgba[from + 1] ?? 0;
      rows[row + 3 + x * 3] = rgba[from + 2] ?? 0;
    }
  }
  return Buffer.concat([
    signature,
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}
