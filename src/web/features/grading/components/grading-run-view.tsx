import type { LabSummary } from "../../../../common/api.ts";
import type { GradingRun, GradingRunItem } from "../../../../common/grading-api.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { getErrorMessage } from "../../../lib/api-error.ts";
import { useGradingRun, useStartGradingRun } from "../api/grading-runs.ts";
import { itemStateLabels, runStatusLabels } from "./run-status.ts";

/** One run: live progress while it goes, then each student's score, check by check. */
export function GradingRunView({
  lab,
  runId,
  canRerun,
  onRerun,
}: {
  lab: LabSummary;
  runId: string;
  canRerun: boolean;
  onRerun: (runId: string) => void;
}) {
  const query = useGradingRun(runId);
  const run = query.data;
  if (query.isPending) return <Loading label="Loading the run…" />;
  if (!run) {
    return (
      <ErrorPanel title="Could not load this run" error={query.error} onRetry={() => void query.refetch()} />
    );
  }
  return (
    <article className="panel grading-run" aria-labelledby="grading-run-title" data-status={run.status}>
      <header className="grading-run-header">
        <h3 id="grading-run-title" className="panel-title">
          {run.rerunOf ? "Re-run" : "Run"} started {new Date(run.createdAt).toLocaleString()} by{" "}
          {run.startedBy}
        </h3>
        <span className={`run-status run-${run.status}`}>{runStatusLabels[run.status]}</span>
      </header>
      <RefreshWarning error={query.error} />
      <RunProgress run={run} />
      {run.status === "interrupted" && (
        <p className="notice notice-warning">
          The console restarted during this run and some sessions had ended by then; they are marked not
          gradable.
        </p>
      )}
      {canRerun && run.status !== "running" && <RerunButton lab={lab} run={run} onRerun={onRerun} />}
      <ResultsTable lab={lab} items={run.items} />
    </article>
  );
}

function RunProgress({ run }: { run: GradingRun }) {
  const { total, done, ungradable } = run.progress;
  return (
    <div className="grading-progress">
      <progress max={total} value={done} aria-label="Sessions graded" />
      <p aria-live="polite">
        {done} of {total} {total === 1 ? "session" : "sessions"} graded
        {ungradable > 0 && `, ${ungradable} not gradable`}
        {run.status === "running" ? "…" : "."}
      </p>
    </div>
  );
}

function RerunButton({
  lab,
  run,
  onRerun,
}: {
  lab: LabSummary;
  run: GradingRun;
  onRerun: (runId: string) => void;
}) {
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
        {start.isPending
          ? "Starting…"
          : `Re-run the ${shortfalls} failed or ungradable ${shortfalls === 1 ? "session" : "sessions"}`}
      </button>
      {start.isError && (
        <p className="notice notice-error" role="alert">
          {getErrorMessage(start.error)}
        </p>
      )}
    </div>
  );
}

function ResultsTable({ lab, items }: { lab: LabSummary; items: GradingRunItem[] }) {
  return (
    <div className="table-scroll">
      <table className="table grading-table" aria-label="Results by student">
        <thead>
          <tr>
            <th scope="col">Student</th>
            <th scope="col">State</th>
            <th scope="col">Score</th>
            {lab.checks.map((check) => (
              <th key={check.id} scope="col" title={check.title}>
                {check.id}
              </th>
            ))}
            <th scope="col">Gradable</th>
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

function ResultRow({ lab, item }: { lab: LabSummary; item: GradingRunItem }) {
  const { result } = item;
  const checks = new Map(result?.gradable ? result.checks.map((check) => [check.checkId, check]) : []);
  return (
    <tr data-state={item.state} data-gradable={result ? String(result.gradable) : undefined}>
      <th scope="row">
        {item.owner}
        <span className="muted small grading-session-id">{item.sessionId}</span>
      </th>
      <td>{itemStateLabels[item.state]}</td>
      <td>{result?.gradable ? `${result.score} / ${result.maxScore}` : "—"}</td>
      {lab.checks.map((labCheck) => {
        const check = checks.get(labCheck.id);
        return (
          <td key={labCheck.id} title={check?.message}>
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
        {!result ? "—" : result.gradable ? "Yes" : <span className="row-message">No: {result.reason}</span>}
      </td>
    </tr>
  );
}
