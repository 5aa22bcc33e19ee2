// A miniature's rows as text, each wide character given its two columns: the font's own CJK glyph
// (or the fallback's) is narrower or wider than two of its Latin cells, which shifted the rest of
// a row with Japanese or Chinese in it out of line with the rows around it. The search's hits are
// <mark>s around the same parts, so marking a hit moves no character.
import { Fragment, memo, useMemo } from "react";
import type { WallHit } from "../../../../common/wall-protocol.ts";
import type { RowPart } from "../lib/cell-width.ts";
import { hitsByRow, rowRuns } from "../lib/screen-marks.ts";

const noHits: readonly WallHit[] = [];

export const WallScreenText = memo(function WallScreenText({
  rows,
  hits = noHits,
}: {
  rows: readonly string[];
  /** The search's matches on these rows, to mark. */
  hits?: readonly WallHit[];
}) {
  const rowHits = useMemo(() => hitsByRow(hits), [hits]);
  return rows.map((row, index) => (
    <span key={index}>
      {index > 0 && "\n"}
      {rowRuns(row, rowHits.get(index)).map((run, at) =>
        run.marked ? (
          <mark key={at} className="wall-mark">
            <Parts parts={run.parts} />
          </mark>
        ) : (
          <Fragment key={at}>
            <Parts parts={run.parts} />
          </Fragment>
        ),
      )}
    </span>
  ));
});

function Parts({ parts }: { parts: readonly RowPart[] }) {
  return parts.map((part, at) =>
    part.wide ? (
      <span key={at} className="wall-wide">
        {part.text}
      </span>
    ) : (
      <Fragment key={at}>{part.text}</Fragment>
    ),
  );
}
