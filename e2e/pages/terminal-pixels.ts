import type { Locator, Page } from "@playwright/test";

/** A part of the page in CSS pixels. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Where one character of a line of terminal text is drawn: its column, from the top of its line down
 * to the bottom of the line below (an underscore sits at the very bottom of its cell, and a renderer
 * that lets it overflow draws it there). `screen` is xterm.js's rows (one element a row) or a `<pre>`
 * (one text line a row). The line is found by its whole text, so the shell's echo of the command that
 * printed it never matches; `index` counts characters, a wide one as one.
 */
export async function characterCell(screen: Locator, lineText: string, index: number): Promise<Box> {
  const box = await screen.evaluate(
    (container, { lineText, index }) => {
      const document = container.ownerDocument;
      const row = [...container.children].find((each) => each.textContent?.trimEnd() === lineText);
      const lines = (container.textContent ?? "").split("\n");
      const lineIndex = lines.findIndex((line) => line.trimEnd() === lineText);
      const scope = row ?? (lineIndex >= 0 ? container : null);
      if (!scope) return null;
      let offset = row
        ? index
        : lines.slice(0, lineIndex).join("\n").length + (lineIndex > 0 ? 1 : 0) + index;
      const walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const length = node.textContent?.length ?? 0;
        if (offset < length) {
          const range = document.createRange();
          range.setStart(node, offset);
          range.setEnd(node, offset + 1);
          const char = range.getBoundingClientRect();
          const lineBox = row?.getBoundingClientRect() ?? char;
          // In the page's coordinates, which a full-page screenshot's clip takes.
          const { scrollX, scrollY } = document.defaultView ?? { scrollX: 0, scrollY: 0 };
          return {
            x: char.left + scrollX,
            y: lineBox.top + scrollY,
            width: char.width,
            height: lineBox.height * 2,
          };
        }
        offset -= length;
      }
      return null;
    },
    { lineText, index },
  );
  if (!box)
    throw new Error(`no line of the screen reads ${JSON.stringify(lineText)} with a character ${index}`);
  return box;
}

/**
 * How many pixels differ between two equally sized parts of the page's screenshot, decoded in a blank
 * page of the same browser (the app's page is left alone).
 */
export async function differingPixels(page: Page, first: Box, second: Box): Promise<number> {
  const shot = async (box: Box) =>
    (await page.screenshot({ clip: whole(box, first), fullPage: true, animations: "disabled" })).toString(
      "base64",
    );
  const a = await shot(first);
  const b = await shot(second);
  const scratch = await page.context().newPage();
  try {
    return await scratch.evaluate(
      async ({ a, b }) => {
        const pixels = async (base64: string) => {
          const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
          const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/png" }));
          const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
          const context = canvas.getContext("2d")!;
          context.drawImage(bitmap, 0, 0);
          return context.getImageData(0, 0, bitmap.width, bitmap.height).data;
        };
        const [left, right] = await Promise.all([pixels(a), pixels(b)]);
        let differing = 0;
        for (let at = 0; at < left.length; at += 4) {
          const distance =
            Math.abs(left[at]! - right[at]!) +
            Math.abs(left[at + 1]! - right[at + 1]!) +
            Math.abs(left[at + 2]! - right[at + 2]!);
          // Anti-aliasing differs by a few levels at most; a glyph's stroke by far more.
          if (distance > 48) differing += 1;
        }
        return differing;
      },
      { a, b },
    );
  } finally {
    await scratch.close();
  }
}

/** Whole pixels at `box`'s place with `size`'s width and height, so both shots have the same size. */
function whole(box: Box, size: Box): Box {
  return {
    x: Math.floor(box.x),
    y: Math.floor(box.y),
    width: Math.ceil(size.width),
    height: Math.ceil(size.height),
  };
}
