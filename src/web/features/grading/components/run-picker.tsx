import { useId } from "react";
import type { GradingRunSummary } from "../../../../common/grading-api.ts";
import { runStatusLabels } from "./run-status.ts";

/** Which run the table shows; the newest unless someone picks another. */
export function RunPicker({
  runs,
  selectedId,
  onSelect,
}: {
  runs: GradingRunSummary[];
  selectedId: string | undefined;
  onSelect: (runId: string) => void;
}) {
  const id = useId();
  return (
    <div className="field grading-run-picker">
      <label className="field-label" htmlFor={id}>
        Run
      </label>
      <select id={id} value={selectedId} onChange={(event) => onSelect(event.target.value)}>
        {runs.map((run) => (
          <option key={run.id} value={run.id}>
            {describeRun(run)}
          </option>
        ))}
      </select>
    </div>
  );
}

function describeRun(run: GradingRunSummary): string {
  const when = new Date(run.createdAt).toLocaleString();
  const rerun = run.rerunOf ? " · re-run" : "";
  return `${when} by ${run.startedBy} · ${runStatusLabels[run.status]} · ${run.progress.done}/${run.progress.total} graded${rerun}`;
}
