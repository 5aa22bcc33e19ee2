// Test helper: the screen a screen recording shows at a time, drawn as the SPA's player draws it (the
// last keyframe before it, then the changes after it), in the framebuffer's four bytes a pixel.
import { pngPixels } from "../../../emulator/testing/png-pixels.ts";
import { framesAt, parseScreenRecording } from "../../../common/screen-recording.ts";
import type { Area, Image } from "../../../common/png.ts";
import type { Framebuffer } from "../../screen/rfb-client.ts";

export function screenAt(recording: string, seconds = Infinity): Framebuffer {
  const frames = framesAt(parseScreenRecording(recording), seconds);
  const first = frames[0];
  const screen: Framebuffer = {
    width: first?.width ?? 0,
    height: first?.height ?? 0,
    pixels: new Uint8Array((first?.width ?? 0) * (first?.height ?? 0) * 4),
  };
  for (const frame of frames) {
    const { width, height, rgb } = pngPixels(Buffer.from(frame.png, "base64"));
    for (let y = 0; y < height; y += 1) {
      for (let x = 0; x < width; x += 1) {
        const to = ((frame.y + y) * screen.width + frame.x + x) * 4;
        const from = (y * width + x) * 3;
        screen.pixels[to] = rgb[from]!;
        screen.pixels[to + 1] = rgb[from + 1]!;
        screen.pixels[to + 2] = rgb[from + 2]!;
      }
    }
  }
  return screen;
}

/** The recording's event lines as arrays, the header left out. */
export function screenEventsOf(recording: string): unknown[][] {
  return recording
    .split("\n")
    .slice(1)
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as unknown[]);
}

export function anImage(width = 64, height = 32): Image {
  return { width, height, pixels: new Uint8Array(width * height * 4) };
}

/** Paints `area` in one colour; returns the area, as the hub reports a change. */
export function paint(image: Image, area: Area, rgb: [number, number, number]): Area {
  for (let y = area.y; y < area.y + area.height; y += 1) {
    for (let x = area.x; x < area.x + area.width; x += 1) {
      image.pixels.set(rgb, (y * image.width + x) * 4);
    }
  }
  return area;
}

/** Noise no PNG squeezes much: for filling a recording fast. */
export function scribble(image: Image, seed: number): Area {
  let state = seed * 2654435761;
  for (let at = 0; at < image.pixels.length; at += 1) {
    state = (state * 1103515245 + 12345) >>> 0;
    image.pixels[at] = state >>> 24;
  }
  return { x: 0, y: 0, width: image.width, height: image.height };
}

export function rgbAt(image: Image, x: number, y: number): number[] {
  const at = (y * image.width + x) * 4;
  return [...image.pixels.subarray(at, at + 3)];
}
