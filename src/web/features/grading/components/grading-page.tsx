import { Link, useParams, useSearchParams } from "react-router";
import type { LabSummary } from "../../../../common/api.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { paths } from "../../../lib/paths.ts";
import { useSignedInUser } from "../../auth/components/signed-in-user.ts";
import { useLabs } from "../../labs/api/get-labs.ts";
import { gradeExportUrls } from "../api/grade-exports.ts";
import { useGradingRuns } from "../api/grading-runs.ts";
import "../grading.css";
import { GradingRunView } from "./grading-run-view.tsx";
import { RunPicker } from "./run-picker.tsx";
import { StartRunForm } from "./start-run-form.tsx";

/** One lab's grading: start a run (instructors), follow it live, read every student's result, export. */
export function GradingPage() {
  const { labId = "" } = useParams();
  const labs = useLabs();
  const lab = labs.data?.find((each) => each.id === labId);

  return (
    <main className="page page-wide">
      <title>{`Grading${lab ? `: ${lab.title}` : ""} · Lab Console`}</title>
      <p>
        <Link to={paths.grading.to()} className="back-link">
          ← All labs
        </Link>
      </p>
      {labs.isPending ? (
        <Loading label="Loading the lab…" />
      ) : !labs.data ? (
        <ErrorPanel title="Could not load the lab" error={labs.error} onRetry={() => void labs.refetch()} />
      ) : !lab ? (
        <div className="panel" role="alert">
          <h1 className="panel-title">Lab not found</h1>
          <p>There is no lab called {labId}.</p>
        </div>
      ) : (
        <LabGrading lab={lab} />
      )}
    </main>
  );
}

function LabGrading({ lab }: { lab: LabSummary }) {
  const me = useSignedInUser();
  const runs = useGradingRuns(lab.id);
  const [searchParams, setSearchParams] = useSearchParams();
  const newest = runs.data?.items[0];
  const selectedId = searchParams.get("run") ?? newest?.id;
  const running = runs.data?.items.some((run) => run.status === "running") ?? false;
  const exports = gradeExportUrls(lab.id);

  const showRun = (runId: string) =>
    setSearchParams(
      (current) => {
        const next = new URLSearchParams(current);
        next.set("run", runId);
        return next;
      },
      { replace: true },
    );

  return (
    <>
      <h1 className="page-title">Grading: {lab.title}</h1>
      <nav className="grading-exports" aria-label="Download grades">
        <span className="muted">Each student&apos;s latest grade:</span>
        <a className="button" href={exports.csv} download>
          Download CSV
        </a>
        <a className="button" href={exports.json} download>
          Download JSON
        </a>
      </nav>
      {me.role === "instructor" ? (
        <StartRunForm lab={lab} runInProgress={running} onStarted={showRun} />
      ) : (
        <p className="muted">
          Only instructors start grading runs; you can follow them and read the results.
        </p>
      )}
      <section className="section" aria-labelledby="grading-runs-title">
        <h2 id="grading-runs-title" className="section-title">
          Grading runs
        </h2>
        {runs.isPending ? (
          <Loading label="Loading grading runs…" />
        ) : !runs.data ? (
          <ErrorPanel
            title="Could not load the grading runs"
            error={runs.error}
            onRetry={() => void runs.refetch()}
          />
        ) : runs.data.items.length === 0 ? (
          <p className="empty">This lab has not been graded yet.</p>
        ) : (
          <>
            <RefreshWarning error={runs.error} />
            <RunPicker runs={runs.data.items} selectedId={selectedId} onSelect={showRun} />
            {selectedId && (
              <GradingRunView
                lab={lab}
                runId={selectedId}
                canRerun={me.role === "instructor" && !running}
                onRerun={showRun}
              />
            )}
          </>
        )}
      </section>
    </>
  );
}
