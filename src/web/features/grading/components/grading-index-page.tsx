import { Link } from "react-router";
import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import { paths } from "../../../lib/paths.ts";
import { useLabs } from "../../labs/api/get-labs.ts";
import "../grading.css";

/** Staff pick the lab to grade. */
export function GradingIndexPage() {
  const labs = useLabs();
  return (
    <main className="page">
      <title>Grading · Lab Console</title>
      <h1 className="page-title">Grading</h1>
      <p className="lead">Grade every running session of a lab at once, follow the run, export the grades.</p>
      {labs.isPending ? (
        <Loading label="Loading labs…" />
      ) : !labs.data ? (
        <ErrorPanel title="Could not load the labs" error={labs.error} onRetry={() => void labs.refetch()} />
      ) : labs.data.length === 0 ? (
        <p className="empty">No labs are configured.</p>
      ) : (
        <ul className="grading-lab-list">
          {labs.data.map((lab) => (
            <li key={lab.id} className="card">
              <h2 className="card-title">
                <Link to={paths.labGrading.to(lab.id)}>{lab.title}</Link>
              </h2>
              <p className="muted small">
                {lab.checks.length} {lab.checks.length === 1 ? "check" : "checks"},{" "}
                {lab.checks.reduce((sum, check) => sum + check.points, 0)} points
              </p>
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
