import type { CheckResult, SessionResult } from "../../../../common/grading.ts";

/** One grade: the score, or why there is none, and every check with its points, hint and output. */
export function CheckResults({ result }: { result: SessionResult }) {
  if (!result.gradable) {
    return (
      <p className="notice notice-warning">
        Not graded: {result.reason} This says nothing about the work itself; try again once the VM is running.
      </p>
    );
  }
  return (
    <>
      <p className="grading-score">
        <strong>
          {result.score} of {result.maxScore} points
        </strong>
        {" · "}
        {passedCount(result.checks)} of {result.checks.length} checks passed
      </p>
      <ul className="check-list">
        {result.checks.map((check) => (
          <CheckItem key={check.checkId} check={check} />
        ))}
      </ul>
    </>
  );
}

function CheckItem({ check }: { check: CheckResult }) {
  return (
    <li className="check-item" data-passed={check.passed}>
      <div className="check-heading">
        <span className={`check-badge ${check.passed ? "check-passed" : "check-failed"}`}>
          {check.passed ? "Passed" : check.points > 0 ? "Partly" : "Failed"}
        </span>
        <span className="check-title">{check.title}</span>
        <span className="check-points">
          {check.points}/{check.maxPoints} {check.maxPoints === 1 ? "point" : "points"}
        </span>
      </div>
      {!check.passed && <p className="check-message">{check.message}</p>}
      {check.outputExcerpt !== "" && (
        <details className="check-output">
          <summary>Output</summary>
          <pre>{check.outputExcerpt}</pre>
        </details>
      )}
    </li>
  );
}

function passedCount(checks: readonly CheckResult[]): number {
  return checks.filter((check) => check.passed).length;
}
