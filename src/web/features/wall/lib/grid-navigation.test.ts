import { describe, expect, it } from "vitest";
import { isGridKey, nextTile } from "./grid-navigation.ts";

// Seven tiles in three columns:
//   0 1 2
//   3 4 5
//   6
describe("nextTile", () => {
  const move = (index: number, key: Parameters<typeof nextTile>[1]) => nextTile(index, key, 7, 3);

  it("steps left and right along the reading order, across rows, and stops at the ends", () => {
    expect(move(1, "ArrowRight")).toBe(2);
    expect(move(2, "ArrowRight")).toBe(3);
    expect(move(3, "ArrowLeft")).toBe(2);
    expect(move(0, "ArrowLeft")).toBe(0);
    expect(move(6, "ArrowRight")).toBe(6);
  });

  it("moves up and down a column and stays put at the top and bottom", () => {
    expect(move(4, "ArrowUp")).toBe(1);
    expect(move(1, "ArrowUp")).toBe(1);
    expect(move(1, "ArrowDown")).toBe(4);
    expect(move(3, "ArrowDown")).toBe(6);
    expect(move(6, "ArrowDown")).toBe(6);
  });

  it("goes down to the last tile from above a gap in the last row", () => {
    expect(move(4, "ArrowDown")).toBe(6);
    expect(move(5, "ArrowDown")).toBe(6);
  });

  it("goes to the first and last tile with Home and End", () => {
    expect(move(4, "Home")).toBe(0);
    expect(move(1, "End")).toBe(6);
  });

  it("copes with one column and with no tiles", () => {
    expect(nextTile(1, "ArrowDown", 3, 1)).toBe(2);
    expect(nextTile(1, "ArrowUp", 3, 0)).toBe(0);
    expect(nextTile(0, "End", 0, 3)).toBe(0);
  });
});

describe("isGridKey", () => {
  it("knows the keys the grid moves with and no others", () => {
    expect(isGridKey("ArrowDown")).toBe(true);
    expect(isGridKey("End")).toBe(true);
    expect(isGridKey("Enter")).toBe(false);
    expect(isGridKey("a")).toBe(false);
  });
});
