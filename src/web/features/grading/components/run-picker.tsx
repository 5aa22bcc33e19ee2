import { useId } from "react";
import { useTranslation } from "react-i18next";
import type { GradingRunSummary } from "../../../../common/grading-api.ts";
import { useFormat } from "../../../lib/i18n/use-format.ts";

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
  const { t } = useTranslation();
  const format = useFormat();
  const id = useId();
  const describe = (run: GradingRunSummary) =>
    t(run.rerunOf ? "grading.picker.rerun" : "grading.picker.run", {
      when: format.dateTime(run.createdAt),
      user: run.startedBy,
      status: t(`grading.runStatus.${run.status}`),
      done: run.progress.done,
      total: run.progress.total,
    });
  return (
    <div className="field grading-run-picker">
      <label className="field-label" htmlFor={id}>
        {t("grading.picker.label")}
      </label>
      <select id={id} value={selectedId} onChange={(event) => onSelect(event.target.value)}>
        {runs.map((run) => (
          <option key={run.id} value={run.id}>
            {describe(run)}
          </option>
        ))}
      </select>
    </div>
  );
}
