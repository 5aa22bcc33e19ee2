// What the BFF sends a viewer of a screen: FramebufferUpdates of changed rectangles, in the
// encodings that viewer asked for. Rectangles of one colour go as Tight fills (4 bytes), larger ones
// as TightPNG (noVNC's encoding -260: a PNG a rectangle, which the browser decodes natively and which
// needs no per-viewer state, so one encoding serves every viewer that is up to date), the rest Raw.
import { encodePng, type Area, type Image } from "../../common/png.ts";
import { rgbxLayout, type PixelLayout } from "./rfb-server.ts";

export const viewerEncodings = {
  raw: 0,
  tightPng: -260,
  desktopSize: -223,
  extendedDesktopSize: -308,
} as const;

export interface ViewerFormat {
  layout: PixelLayout;
  tightPng: boolean;
  /** How the viewer hears of a new screen size; "none": it cannot, and gets updates of the new size regardless. */
  resize: "desktop-size" | "extended-desktop-size" | "none";
}

export const initialFormat: ViewerFormat = { layout: rgbxLayout, tightPng: false, resize: "none" };

/** The format of a viewer that sent SetEncodings (in its order of preference, which only matters for resizes). */
export function formatWith(layout: PixelLayout, encodings: readonly number[]): ViewerFormat {
  const resize = encodings.includes(viewerEncodings.desktopSize)
    ? "desktop-size"
    : encodings.includes(viewerEncodings.extendedDesktopSize)
      ? "extended-desktop-size"
      : "none";
  return { layout, tightPng: encodings.includes(viewerEncodings.tightPng), resize };
}

/** A key for the formats whose updates are byte for byte the same. */
export function formatKey(format: ViewerFormat): string {
  const { layout } = format;
  return [format.tightPng, layout.bigEndian, layout.redShift, layout.greenShift, layout.blueShift].join("/");
}

// Below this a rectangle's PNG (signature and chunks alone are 57 bytes) is no smaller than Raw.
const smallestPngArea = 64;
const pngLevel = 6;

/** A FramebufferUpdate of these rectangles as the framebuffer shows them now. */
export function encodeUpdate(framebuffer: Image, rects: readonly Area[], format: ViewerFormat): Buffer {
  const parts: Buffer[] = [updateHeader(rects.length)];
  for (const rect of rects) parts.push(encodeRect(framebuffer, rect, format));
  return Buffer.concat(parts);
}

/** The new size, as the one rectangle of an update (the whole screen follows in the next). */
export function encodeResize(width: number, height: number, format: ViewerFormat): Buffer | undefined {
  if (format.resize === "none") return undefined;
  const extended = format.resize === "extended-desktop-size";
  const encoding = extended ? viewerEncodings.extendedDesktopSize : viewerEncodings.desktopSize;
  const rect = rectHeader({ x: 0, y: 0, width, height }, encoding);
  if (!extended) return Buffer.concat([updateHeader(1), rect]);
  // One screen, id 0, covering it all (RFC 6143 7.8.2).
  const screens = Buffer.alloc(4 + 16);
  screens.writeUInt8(1, 0);
  screens.writeUInt16BE(width, 4 + 8);
  screens.writeUInt16BE(height, 4 + 10);
  return Buffer.concat([updateHeader(1), rect, screens]);
}

function encodeRect(framebuffer: Image, rect: Area, format: ViewerFormat): Buffer {
  if (format.tightPng) {
    const colour = solidColour(framebuffer, rect);
    if (colour) {
      return Buffer.concat([rectHeader(rect, viewerEncodings.tightPng), Buffer.from([0x80, ...colour])]);
    }
    const png =
      rect.width * rect.height >= smallestPngArea ? encodePng(framebuffer, rect, pngLevel) : undefined;
    // Tight's compact length says at most 22 bits: a larger PNG (a big desktop's photo) goes Raw.
    if (png && png.length < 1 << 22) {
      return Buffer.concat([
        rectHeader(rect, viewerEncodings.tightPng),
        Buffer.from([0xa0]),
        compactLength(png.length),
        png,
      ]);
    }
  }
  return Buffer.concat([rectHeader(rect, viewerEncodings.raw), rawPixels(framebuffer, rect, format.layout)]);
}

function updateHeader(count: number): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt16BE(count, 2);
  return header;
}

function rectHeader(rect: Area, encoding: number): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(rect.x, 0);
  header.writeUInt16BE(rect.y, 2);
  header.writeUInt16BE(rect.width, 4);
  header.writeUInt16BE(rect.height, 6);
  header.writeInt32BE(encoding, 8);
  return header;
}

/** Tight's length: 7 bits a byte, low first, in one to three bytes. */
function compactLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  if (length < 0x4000) return Buffer.from([(length & 0x7f) | 0x80, length >> 7]);
  return Buffer.from([(length & 0x7f) | 0x80, ((length >> 7) & 0x7f) | 0x80, length >> 14]);
}

function solidColour(framebuffer: Image, rect: Area): [number, number, number] | undefined {
  const { pixels, width: stride } = framebuffer;
  const first = (rect.y * stride + rect.x) * 4;
  const red = pixels[first]!;
  const green = pixels[first + 1]!;
  const blue = pixels[first + 2]!;
  for (let y = rect.y; y < rect.y + rect.height; y += 1) {
    let at = (y * stride + rect.x) * 4;
    for (let x = 0; x < rect.width; x += 1, at += 4) {
      if (pixels[at] !== red || pixels[at + 1] !== green || pixels[at + 2] !== blue) return undefined;
    }
  }
  return [red, green, blue];
}

function rawPixels(framebuffer: Image, rect: Area, layout: PixelLayout): Buffer {
  const { pixels, width: stride } = framebuffer;
  const out = Buffer.alloc(rect.width * rect.height * 4);
  const rowBytes = rect.width * 4;
  const same =
    !layout.bigEndian && layout.redShift === 0 && layout.greenShift === 8 && layout.blueShift === 16;
  for (let y = 0; y < rect.height; y += 1) {
    const from = ((rect.y + y) * stride + rect.x) * 4;
    if (same) {
      out.set(pixels.subarray(from, from + rowBytes), y * rowBytes);
      continue;
    }
    for (let x = 0; x < rect.width; x += 1) {
      const at = from + x * 4;
      const value =
        ((pixels[at]! << layout.redShift) |
          (pixels[at + 1]! << layout.greenShift) |
          (pixels[at + 2]! << layout.blueShift)) >>>
        0;
      if (layout.bigEndian) out.writeUInt32BE(value, y * rowBytes + x * 4);
      else out.writeUInt32LE(value, y * rowBytes + x * 4);
    }
  }
  return out;
}
