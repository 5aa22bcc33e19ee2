// Test helper: the screen a screen recording shows at a time, drawn as the SPA's player draws it (the
// last keyframe before it, then the changes after it), in the framebuffer's four bytes a pixel.
import { pngPixels } from "../../../emulator/testing/png-pixels.ts";
import { framesAt, parseScreenRecording } from "../../../common/screen-recording.ts";
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
