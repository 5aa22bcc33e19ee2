// The parts of a screen a viewer has not been sent since they changed. Kept as a few rectangles:
// past that they merge into the one box around them all, which costs a few more pixels to send and
// never grows the list (a slow viewer's backlog is one screenful at most, however much changed).
import type { Area } from "../../common/png.ts";

const mostRects = 8;

export class DirtyRegion {
  private rects: Area[] = [];

  get isEmpty(): boolean {
    return this.rects.length === 0;
  }

  add(changed: readonly Area[]): void {
    for (const rect of changed) {
      if (rect.width === 0 || rect.height === 0) continue;
      if (this.rects.some((kept) => contains(kept, rect))) continue;
      this.rects = this.rects.filter((kept) => !contains(rect, kept));
      this.rects.push(rect);
    }
    if (this.rects.length > mostRects) this.rects = [boundingBox(this.rects)];
  }

  /** All of it, clipped to the screen; the region is empty after. */
  take(width: number, height: number): Area[] {
    const taken = this.rects
      .map((rect) => clip(rect, width, height))
      .filter((rect) => rect.width > 0 && rect.height > 0);
    this.rects = [];
    return taken;
  }
}

function contains(outer: Area, inner: Area): boolean {
  return (
    inner.x >= outer.x &&
    inner.y >= outer.y &&
    inner.x + inner.width <= outer.x + outer.width &&
    inner.y + inner.height <= outer.y + outer.height
  );
}

function boundingBox(rects: readonly Area[]): Area {
  const left = Math.min(...rects.map((rect) => rect.x));
  const top = Math.min(...rects.map((rect) => rect.y));
  const right = Math.max(...rects.map((rect) => rect.x + rect.width));
  const bottom = Math.max(...rects.map((rect) => rect.y + rect.height));
  return { x: left, y: top, width: right - left, height: bottom - top };
}

function clip(rect: Area, width: number, height: number): Area {
  const x = Math.min(rect.x, width);
  const y = Math.min(rect.y, height);
  return {
    x,
    y,
    width: Math.min(rect.x + rect.width, width) - x,
    height: Math.min(rect.y + rect.height, height) - y,
  };
}
