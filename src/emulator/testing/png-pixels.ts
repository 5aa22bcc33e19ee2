// Test helper: the pixels of a PNG as guests' screenshots come (8-bit RGB, not interlaced; libpng
// filters rows, the emulator does not), to compare with what a VNC viewer shows; anything else is
// refused rather than misread.
import { inflateSync } from "node:zlib";

export function pngPixels(png: Buffer): { width: number; height: number; rgb: Buffer } {
  if (!png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    throw new Error("not a PNG");
  }
  let width = 0;
  let height = 0;
  const data: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString("latin1", at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (body[8] !== 8 || body[9] !== 2) throw new Error("not 8-bit RGB");
    } else if (type === "IDAT") data.push(body);
    at += 12 + length;
  }
  const rows = inflateSync(Buffer.concat(data));
  const stride = width * 3;
  const rgb = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y += 1) {
    const filter = rows[y * (1 + stride)];
    for (let x = 0; x < stride; x += 1) {
      const raw = rows[y * (1 + stride) + 1 + x] ?? 0;
      const left = x >= 3 ? (rgb[y * stride + x - 3] ?? 0) : 0;
      const up = y > 0 ? (rgb[(y - 1) * stride + x] ?? 0) : 0;
      const upLeft = x >= 3 && y > 0 ? (rgb[(y - 1) * stride + x - 3] ?? 0) : 0;
      rgb[y * stride + x] = (raw + predictor(filter, left, up, upLeft)) & 0xff;
    }
  }
  return { width, height, rgb };
}

/** PNG's filter types 0-4 (None, Sub, Up, Average, Paeth): what a byte was stored relative to. */
function predictor(filter: number | undefined, left: number, up: number, upLeft: number): number {
  switch (filter) {
    case 0:
      return 0;
    case 1:
      return left;
    case 2:
      return up;
    case 3:
      return Math.floor((left + up) / 2);
    case 4: {
      const estimate = left + up - upLeft;
      const [a, b, c] = [Math.abs(estimate - left), Math.abs(estimate - up), Math.abs(estimate - upLeft)];
      return a <= b && a <= c ? left : b <= c ? up : upLeft;
    }
    default:
      throw new Error(`unknown PNG filter ${filter}`);
  }
}
