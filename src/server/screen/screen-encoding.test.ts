import { describe, expect, it } from "vitest";
import { pngPixels } from "../../emulator/testing/png-pixels.ts";
import { rgbxLayout } from "./rfb-server.ts";
import { encodeResize, encodeUpdate, formatWith } from "./screen-encoding.ts";

/** A 16x8 screen: black, with the right half's top row red. */
function screen() {
  const width = 16;
  const height = 8;
  const pixels = new Uint8Array(width * height * 4);
  for (let x = 8; x < 16; x += 1) pixels[x * 4] = 255;
  return { width, height, pixels };
}

const noVnc = formatWith(rgbxLayout, [-260, 1, 0, -223, -308]);
const rawOnly = formatWith({ bigEndian: false, redShift: 16, greenShift: 8, blueShift: 0 }, [0]);

describe("screen updates for viewers", () => {
  it("fills a one-colour rectangle with Tight's four bytes", () => {
    const update = encodeUpdate(screen(), [{ x: 0, y: 0, width: 8, height: 8 }], noVnc);
    expect(update.readUInt16BE(2)).toBe(1);
    expect(update.readInt32BE(4 + 8)).toBe(-260);
    expect([...update.subarray(16)]).toEqual([0x80, 0, 0, 0]);
  });

  it("sends a mixed rectangle as a PNG of exactly its pixels, behind Tight's compact length", () => {
    const update = encodeUpdate(screen(), [{ x: 4, y: 0, width: 12, height: 8 }], noVnc);
    expect(update[16]).toBe(0xa0);
    const length = (update[17]! & 0x7f) | (update[17]! & 0x80 ? update[18]! << 7 : 0);
    const png = update.subarray(update[17]! & 0x80 ? 19 : 18);
    expect(png.length).toBe(length);
    const { width, height, rgb } = pngPixels(png);
    expect([width, height]).toEqual([12, 8]);
    expect([...rgb.subarray(0, 3)]).toEqual([0, 0, 0]); // x 4: black
    expect([...rgb.subarray(4 * 3, 4 * 3 + 3)]).toEqual([255, 0, 0]); // x 8: red
    expect([...rgb.subarray(12 * 3 + 4 * 3, 12 * 3 + 4 * 3 + 3)]).toEqual([0, 0, 0]); // second row
  });

  it("sends Raw in the pixel format the viewer asked for", () => {
    const update = encodeUpdate(screen(), [{ x: 8, y: 0, width: 1, height: 1 }], rawOnly);
    expect(update.readInt32BE(4 + 8)).toBe(0);
    // Red at bit 16, little-endian: bytes blue, green, red, unused.
    expect([...update.subarray(16)]).toEqual([0, 0, 255, 0]);
  });

  it("tells of a new size with the pseudo-encoding the viewer takes, or not at all", () => {
    const plain = encodeResize(720, 400, noVnc)!;
    expect(plain.readInt32BE(4 + 8)).toBe(-223);
    expect([plain.readUInt16BE(4 + 4), plain.readUInt16BE(4 + 6)]).toEqual([720, 400]);
    const extended = encodeResize(720, 400, formatWith(rgbxLayout, [-308]))!;
    expect(extended.readInt32BE(4 + 8)).toBe(-308);
    expect(extended[16]).toBe(1); // one screen
    expect(encodeResize(720, 400, rawOnly)).toBeUndefined();
  });
});
