// Arrow keys between the wall's tiles, as they flow in its grid: left and right step along the reading
// order (to the row above or below at the ends), up and down a column, Home and End to the first and
// last tile. The grid's column count is the page's to measure; this is only the arithmetic.

export const gridKeys = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"] as const;
export type GridKey = (typeof gridKeys)[number];

export function isGridKey(key: string): key is GridKey {
  return (gridKeys as readonly string[]).includes(key);
}

/**
 * The tile that `key` moves to from tile `index` of `count` laid out in `columns` columns; `index`
 * itself when there is none that way (no wrapping from the last tile to the first). Down from a tile
 * with nothing under it, in a last row that is not full, goes to the last tile.
 */
export function nextTile(index: number, key: GridKey, count: number, columns: number): number {
  if (count === 0) return index;
  const last = count - 1;
  const cols = Math.max(1, columns);
  switch (key) {
    case "ArrowLeft":
      return Math.max(0, index - 1);
    case "ArrowRight":
      return Math.min(last, index + 1);
    case "ArrowUp":
      return index - cols >= 0 ? index - cols : index;
    case "ArrowDown":
      return Math.floor(index / cols) < Math.floor(last / cols) ? Math.min(last, index + cols) : index;
    case "Home":
      return 0;
    case "End":
      return last;
  }
}
