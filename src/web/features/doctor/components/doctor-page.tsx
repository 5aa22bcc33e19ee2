import type { DoctorCheck, DoctorStatus } from "../../../../common/operations-api.ts";
import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import { CapacityPanel } from "../../admin/components/capacity-panel.tsx";
import { useDoctorReport } from "../api/get-doctor.ts";
import "../doctor.css";

const statusLabels: Record<DoctorStatus, string> = { ok: "OK", warn: "Warning", fail: "Failed" };

/** The doctor's checks, run by the BFF with its own credentials: the same as `npm run doctor`. */
export function DoctorPage() {
  const query = useDoctorReport();
  const report = query.data;

  return (
    <main className="page page-wide">
      <title>Doctor · Lab Console</title>
      <h1 className="page-title">Doctor</h1>
      <p className="lead">
        Checks of the cluster as Lab Console sees it, with its own permissions. The same checks run with{" "}
        <code>npm run doctor</code>.
      </p>
      {query.isPending ? (
        <Loading label="Running the checks…" />
      ) : !report ? (
        <ErrorPanel
          title="Could not run the checks"
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <div className="doctor-summary" data-status={report.status}>
            <p>
              {(["fail", "warn", "ok"] as const)
                .map(
                  (status) =>
                    `${report.checks.filter((check) => check.status === status).length} ${statusLabels[status].toLowerCase()}`,
                )
                .join(" · ")}{" "}
              <span className="muted small">(checked {new Date(report.checkedAt).toLocaleTimeString()})</span>
            </p>
            <button
              type="button"
              className="button"
              disabled={query.isFetching}
              onClick={() => void query.refetch()}
            >
              {query.isFetching ? "Running…" : "Run again"}
            </button>
          </div>
          <ul className="doctor-checks" aria-label="Checks">
            {report.checks.map((check) => (
              <DoctorCheckItem key={check.id} check={check} />
            ))}
          </ul>
        </>
      )}
      <CapacityPanel />
    </main>
  );
}

function DoctorCheckItem({ check }: { check: DoctorCheck }) {
  const titleId = `doctor-${check.id}`;
  return (
    <li
      className="card doctor-check"
      aria-labelledby={titleId}
      data-check={check.id}
      data-status={check.status}
    >
      <header className="doctor-check-header">
        <h2 id={titleId} className="card-title">
          {check.title}
        </h2>
        <span className={`doctor-status doctor-status-${check.status}`}>{statusLabels[check.status]}</span>
      </header>
      <p>{check.summary}</p>
      {check.details.length > 0 && (
        <ul className="doctor-details">
          {check.details.map((detail) => (
            <li key={detail}>{detail}</li>
          ))}
        </ul>
      )}
      {check.fix && (
        <div className="doctor-fix">
          <h3 className="doctor-fix-title">How to fix it</h3>
          <pre>{check.fix}</pre>
        </div>
      )}
    </li>
  );
}
