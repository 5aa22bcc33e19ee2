import { describe, expect, it } from "vitest";
import { DirtyRegion } from "./dirty-region.ts";

describe("a viewer's dirty region", () => {
  it("keeps separate changes apart, drops those inside others, and clips to the screen", () => {
    const region = new DirtyRegion();
    region.add([{ x: 0, y: 0, width: 10, height: 10 }]);
    region.add([{ x: 2, y: 2, width: 3, height: 3 }]);
    region.add([{ x: 700, y: 390, width: 40, height: 40 }]);
    expect(region.take(720, 400)).toEqual([
      { x: 0, y: 0, width: 10, height: 10 },
      { x: 700, y: 390, width: 20, height: 10 },
    ]);
    expect(region.isEmpty).toBe(true);
  });

  it("merges into one box once many changes wait, so a slow viewer's backlog stays one screenful", () => {
    const region = new DirtyRegion();
    for (let row = 0; row < 25; row += 1) region.add([{ x: 0, y: row * 16, width: 9, height: 16 }]);
    expect(region.take(720, 400)).toEqual([{ x: 0, y: 0, width: 9, height: 400 }]);
  });
});
