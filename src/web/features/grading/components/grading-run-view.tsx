import { useTranslation } from "react-i18next";
import type { GradingRun, GradingRunItem } from "../../../../common/grading-api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { LangText } from "../../../components/lang-text.tsx";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { english, pickTranslation } from "../../../lib/i18n/pick-translation.ts";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import { useLanguage } from "../../../lib/i18n/use-language.ts";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { useGradingRun, useStartGradingRun } from "../api/grading-runs.ts";
import { useOutcomeText } from "./check-results.tsx";

/** One run: live progress while it goes, then each student's score, check by check. */
export function GradingRunView({
  lab,
  runId,
  canRerun,
  onRerun,
}: {
  lab: LocalizedLab;
  runId: string;
  canRerun: boolean;
  onRerun: (runId: string) => void;
}) {
  const { t } = useTranslation();
  const format = useFormat();
  const query = useGradingRun(runId);
  const run = query.data;
  if (query.isPending) return <Loading label={t("grading.run.loading")} />;
  if (!run) {
    return (
      <ErrorPanel
        title={t("grading.run.loadFailed")}
        error={query.error}
        onRetry={() => void query.refetch()}
      />
    );
  }
  const started = { when: format.dateTime(run.createdAt), user: run.startedBy };
  return (
    <article className="panel grading-run" aria-labelledby="grading-run-title" data-status={run.status}>
      <header className="grading-run-header">
        <h3 id="grading-run-title" className="panel-title">
          {run.rerunOf ? t("grading.run.rerunTitle", started) : t("grading.run.title", started)}
        </h3>
        <span className={`run-status run-${run.status}`}>{t(`grading.runStatus.${run.status}`)}</span>
      </header>
      <RefreshWarning error={query.error} />
      <RunProgress run={run} />
      {run.status === "interrupted" && (
        <p className="notice notice-warning">{t("grading.run.interrupted")}</p>
      )}
      {canRerun && run.status !== "running" && <RerunButton lab={lab} run={run} onRerun={onRerun} />}
      <ResultsTable lab={lab} items={run.items} />
    </article>
  );
}

function RunProgress({ run }: { run: GradingRun }) {
  const { t } = useTranslation();
  const { total, done, ungradable } = run.progress;
  return (
    <div className="grading-progress">
      <progress max={total} value={done} aria-label={t("grading.run.progressLabel")} />
      <p aria-live="polite">
        {run.status === "running"
          ? t("grading.run.progressRunning", { done, count: total })
          : t("grading.run.progressDone", { done, count: total })}
        {ungradable > 0 && <> {t("grading.run.ungradable", { count: ungradable })}</>}
      </p>
    </div>
  );
}

function RerunButton({
  lab,
  run,
  onRerun,
}: {
  lab: LocalizedLab;
  run: GradingRun;
  onRerun: (runId: string) => void;
}) {
  const { t } = useTranslation();
  const start = useStartGradingRun(lab.id);
  const shortfalls = run.items.filter(
    ({ result }) => result !== null && (!result.gradable || result.score < result.maxScore),
  ).length;
  if (shortfalls === 0) return null;
  return (
    <div className="grading-actions">
      <button
        type="button"
        className="button"
        disabled={start.isPending}
        onClick={() =>
          start.mutate({ kind: "rerun", runId: run.id }, { onSuccess: (next) => onRerun(next.id) })
        }
      >
        {start.isPending ? t("grading.start.pending") : t("grading.run.rerun", { count: shortfalls })}
      </button>
      {start.isError && (
        <p className="notice notice-error" role="alert">
          <ErrorText error={start.error} />
        </p>
      )}
    </div>
  );
}

function ResultsTable({ lab, items }: { lab: LocalizedLab; items: GradingRunItem[] }) {
  const { t } = useTranslation();
  return (
    // A column a check: a lab of many checks scrolls sideways, which a keyboard must reach too.
    <div className="table-scroll" tabIndex={0} role="region" aria-label={t("grading.results.label")}>
      <table className="table grading-table" aria-label={t("grading.results.label")}>
        <thead>
          <tr>
            <th scope="col">{t("grading.results.student")}</th>
            <th scope="col">{t("grading.results.state")}</th>
            <th scope="col">{t("grading.results.score")}</th>
            {lab.checks.map((check) => (
              <th key={check.id} scope="col" className="grading-check-heading">
                <LangText text={check.title} />
              </th>
            ))}
            <th scope="col">{t("grading.results.gradable")}</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <ResultRow key={item.sessionId} lab={lab} item={item} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ResultRow({ lab, item }: { lab: LocalizedLab; item: GradingRunItem }) {
  const { t } = useTranslation();
  const { language } = useLanguage();
  const outcome = useOutcomeText();
  const { result } = item;
  const checks = new Map(result?.gradable ? result.checks.map((check) => [check.checkId, check]) : []);
  return (
    <tr data-state={item.state} data-gradable={result ? String(result.gradable) : undefined}>
      <th scope="row" translate="no">
        {item.owner}
        <span className="muted small grading-session-id">{item.sessionId}</span>
      </th>
      <td>{t(`grading.itemState.${item.state}`)}</td>
      <td>{result?.gradable ? `${result.score} / ${result.maxScore}` : "—"}</td>
      {lab.checks.map((labCheck) => {
        const check = checks.get(labCheck.id);
        const hint = check?.hint && pickTranslation(check.hint, check.translations?.hint, language).text;
        const tooltip = check?.outcome
          ? [outcome(check.outcome), hint && t("grading.check.hintText", { hint })].filter(Boolean).join(" ")
          : check?.message;
        return (
          <td key={labCheck.id} title={tooltip}>
            {check ? (
              <span className={`check-badge ${check.passed ? "check-passed" : "check-failed"}`}>
                {check.points}/{check.maxPoints}
              </span>
            ) : (
              "—"
            )}
          </td>
        );
      })}
      <td className="grading-gradable">
        {!result ? (
          "—"
        ) : result.gradable ? (
          t("grading.results.yes")
        ) : (
          <span className="row-message">
            {t("grading.results.no")} <LangText text={english(result.reason)} />
          </span>
        )}
      </td>
    </tr>
  );
}
