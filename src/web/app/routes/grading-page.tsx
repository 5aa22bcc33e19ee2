// /grading/:labId: one lab's grading runs, and (for instructors) a new run over the lab's running
// sessions, which come from the sessions feature.
import type { ComponentProps } from "react";
import { Trans, useTranslation } from "react-i18next";
import { Link, useParams, useSearchParams } from "react-router";
import { LangText } from "../../components/lang-text.tsx";
import { ErrorPanel, Loading, RefreshWarning } from "../../components/page-state.tsx";
import type { LocalizedLab } from "../../lib/localize-lab.ts";
import { paths } from "../../lib/paths.ts";
import { useSignedInUser } from "../../lib/signed-in-user.ts";
import { gradeExportUrls } from "../../features/grading/api/grade-exports.ts";
import { useGradingRuns } from "../../features/grading/api/grading-runs.ts";
import "../../features/grading/grading.css";
import { GradingRunView } from "../../features/grading/components/grading-run-view.tsx";
import { RunPicker } from "../../features/grading/components/run-picker.tsx";
import { StartRunForm } from "../../features/grading/components/start-run-form.tsx";
import { useLabs } from "../../features/labs/api/get-labs.ts";
import { useSessions } from "../../features/sessions/api/get-sessions.ts";

/** One lab's grading: start a run (instructors), follow it live, read every student's result, export. */
export function GradingPage() {
  const { t } = useTranslation();
  const { labId = "" } = useParams();
  const labs = useLabs();
  const lab = labs.data?.find((each) => each.id === labId);
  const page = lab ? t("grading.page.title", { lab: lab.title.text }) : t("grading.index.title");

  return (
    <main className="page page-wide">
      <title>{t("app.pageTitle", { page })}</title>
      <p>
        <Link to={paths.grading.to()} className="back-link">
          {t("grading.page.back")}
        </Link>
      </p>
      {labs.isPending ? (
        <Loading label={t("grading.page.loadingLab")} />
      ) : !labs.data ? (
        <ErrorPanel
          title={t("grading.page.labLoadFailed")}
          error={labs.error}
          onRetry={() => void labs.refetch()}
        />
      ) : !lab ? (
        <div className="panel" role="alert">
          <h1 className="panel-title">{t("grading.page.labNotFound")}</h1>
          <p>
            <Trans
              i18nKey="grading.page.noSuchLab"
              components={{ id: <code translate="no">{labId}</code> }}
            />
          </p>
        </div>
      ) : (
        <LabGrading lab={lab} />
      )}
    </main>
  );
}

function LabGrading({ lab }: { lab: LocalizedLab }) {
  const { t } = useTranslation();
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
      <h1 className="page-title">
        <Trans i18nKey="grading.page.heading" components={{ lab: <LangText text={lab.title} /> }} />
      </h1>
      <nav className="grading-exports" aria-label={t("grading.page.downloads")}>
        <span className="muted">{t("grading.page.latestGrades")}</span>
        <a className="button" href={exports.csv} download>
          {t("grading.page.downloadCsv")}
        </a>
        <a className="button" href={exports.json} download>
          {t("grading.page.downloadJson")}
        </a>
      </nav>
      {me.role === "instructor" ? (
        <StartRun lab={lab} runInProgress={running} onStarted={showRun} />
      ) : (
        <p className="muted">{t("grading.page.instructorsOnly")}</p>
      )}
      <section className="section" aria-labelledby="grading-runs-title">
        <h2 id="grading-runs-title" className="section-title">
          {t("grading.page.runs")}
        </h2>
        {runs.isPending ? (
          <Loading label={t("grading.page.loadingRuns")} />
        ) : !runs.data ? (
          <ErrorPanel
            title={t("grading.page.runsLoadFailed")}
            error={runs.error}
            onRetry={() => void runs.refetch()}
          />
        ) : runs.data.items.length === 0 ? (
          <p className="empty">{t("grading.page.noRuns")}</p>
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

/** The start form with the lab's running sessions, asked for only where an instructor sees the form. */
function StartRun(props: Omit<ComponentProps<typeof StartRunForm>, "sessions">) {
  const sessions = useSessions({ lab: props.lab.id, status: "running", pageSize: 1000 });
  return <StartRunForm {...props} sessions={sessions} />;
}
