import { useFormat } from "../../../lib/i18n/use-format.ts";
import { formatSize } from "../lib/format-size.ts";

export interface Progress {
  done: number;
  total: number;
}

/** A bar with the bytes moved so far; it stays at its last value once the transfer ended. */
export function TransferProgress({ progress, label }: { progress: Progress; label: string }) {
  const format = useFormat();
  const percent = progress.total > 0 ? Math.floor((progress.done / progress.total) * 100) : 0;
  return (
    <p className="file-progress">
      <progress max={100} value={percent} aria-label={label} />
      <span aria-hidden="true">
        {format.number(percent)}% · {formatSize(progress.done, format.number)} /{" "}
        {formatSize(progress.total, format.number)}
      </span>
    </p>
  );
}
