// A VM screen's miniature for the class wall: the framebuffer the hub holds, shrunk by a whole
// factor (each miniature pixel the mean of the block it covers, so text stays a readable grey
// rather than a scatter of dots) and sent as a PNG. Made from the one VNC line the hub holds,
// never from a second connection or vnc/screenshot (docs/vnc.md).
import { encodePng, type Image } from "../../common/png.ts";

/** The widest miniature the wall shows. */
export const thumbnailMaxWidth = 240;

export function thumbnailPng(
  image: Image,
  maxWidth = thumbnailMaxWidth,
): { width: number; height: number; png: Buffer } {
  const factor = Math.max(1, Math.ceil(image.width / maxWidth));
  const width = Math.floor(image.width / factor);
  const height = Math.floor(image.height / factor);
  const pixels = new Uint8Array(width * height * 4);
  const area = factor * factor;
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      let red = 0;
      let green = 0;
      let blue = 0;
      for (let dy = 0; dy < factor; dy += 1) {
        let at = ((y * factor + dy) * image.width + x * factor) * 4;
        for (let dx = 0; dx < factor; dx += 1, at += 4) {
          red += image.pixels[at]!;
          green += image.pixels[at + 1]!;
          blue += image.pixels[at + 2]!;
        }
      }
      const to = (y * width + x) * 4;
      pixels[to] = red / area;
      pixels[to + 1] = green / area;
      pixels[to + 2] = blue / area;
    }
  }
  return { width, height, png: encodePng({ width, height, pixels }) };
}
