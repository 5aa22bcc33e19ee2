// A miniature's rows as text, each wide character given its two columns: the font's own CJK glyph
// (or the fallback's) is narrower or wider than two of its Latin cells, which shifted the rest of
// a row with Japanese or Chinese in it out of line with the rows around it.
import { memo } from "react";
import { rowParts } from "../lib/cell-width.ts";

export const WallScreenText = memo(function WallScreenText({ rows }: { rows: readonly string[] }) {
  return rows.map((row, index) => (
    <span key={index}>
      {index > 0 && "\n"}
      {rowParts(row).map((part, at) =>
        part.wide ? (
          <span key={at} className="wall-wide">
            {part.text}
          </span>
        ) : (
          part.text
        ),
      )}
    </span>
  ));
});
