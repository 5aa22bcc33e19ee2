// A row of a miniature cut where the search's hits start and end, so the hits can be marked without
// losing the wide characters' two columns (cell-width.ts): each run holds the row's parts, wide
// characters one to a part, and says whether the search found it.
import type { WallHit } from "../../../../common/wall-protocol.ts";
import { rowParts, type RowPart } from "./cell-width.ts";

export type RowRun = { marked: boolean; parts: RowPart[] };

/** The hits of one screen by row, each row's in order. */
export function hitsByRow(hits: readonly WallHit[]): Map<number, WallHit[]> {
  const rows = new Map<number, WallHit[]>();
  for (const hit of hits) {
    const row = rows.get(hit.row);
    if (row) row.push(hit);
    else rows.set(hit.row, [hit]);
  }
  for (const row of rows.values()) row.sort((a, b) => a.start - b.start);
  return rows;
}

/**
 * `row` in runs, marked where `hits` (UTF-16 offsets into the row, end exclusive) fall. A character
 * is marked whole when a hit takes any of it: a hit that splits a surrogate pair marks the pair.
 * Overlapping or touching hits make one run.
 */
export function rowRuns(row: string, hits: readonly Pick<WallHit, "start" | "end">[] = []): RowRun[] {
  if (hits.length === 0) return row === "" ? [] : [{ marked: false, parts: rowParts(row) }];
  const runs: RowRun[] = [];
  let text = "";
  let marked = false;
  const flush = () => {
    if (text !== "") runs.push({ marked, parts: rowParts(text) });
    text = "";
  };
  let offset = 0;
  for (const char of row) {
    const end = offset + char.length;
    const inHit = hits.some((hit) => hit.start < end && hit.end > offset);
    if (inHit !== marked) {
      flush();
      marked = inHit;
    }
    text += char;
    offset = end;
  }
  flush();
  return runs;
}
