import type { Locator } from "@playwright/test";
import { screenText } from "../../src/emulator/testing/screen-text.ts";

/**
 * The 25 rows of text a canvas shows a VM's text screen with (720x400, the VGA font), read off its
 * pixels in the page: what a person sees, whoever drew it (noVNC live, or a recording's player).
 */
export async function canvasText(canvas: Locator): Promise<string[]> {
  const { width, height, red } = await canvas.evaluate((element: HTMLCanvasElement) => {
    const context = element.getContext("2d");
    if (!context || element.width === 0) return { width: 0, height: 0, red: "" };
    const rgba = context.getImageData(0, 0, element.width, element.height).data;
    // One channel is enough for light grey on black, and a quarter of the bytes to carry over.
    const red = new Uint8Array(rgba.length / 4);
    for (let at = 0; at < red.length; at += 1) red[at] = rgba[at * 4] ?? 0;
    let binary = "";
    for (let at = 0; at < red.length; at += 0x8000)
      binary += String.fromCharCode(...red.subarray(at, at + 0x8000));
    return { width: element.width, height: element.height, red: btoa(binary) };
  });
  const channel = Buffer.from(red, "base64");
  const pixels = new Uint8Array(channel.length * 4);
  for (let at = 0; at < channel.length; at += 1) pixels[at * 4] = channel[at] ?? 0;
  return screenText({ width, height, pixels });
}
