// /recordings/:sessionId: replays a session's console recording (staff any, students their own),
// also after the session itself is gone; ?terminal=N one of its terminals' instead. Whose and which
// lab come from the recording's header, the lab's title from the labs feature.
import { lazy, Suspense } from "react";
import { useTranslation } from "react-i18next";
import { Link, useParams, useSearchParams } from "react-router";
import { ErrorPanel, Loading } from "../../components/page-state.tsx";
import { paths } from "../../lib/paths.ts";
import { isStaff } from "../../lib/roles.ts";
import { useSignedInUser } from "../../lib/signed-in-user.ts";
import { useLabTitles } from "../../features/labs/api/get-labs.ts";
import { useRecording } from "../../features/recordings/api/get-recording.ts";
import { recordingFileName, recordingFileUrl } from "../../features/recordings/api/recording-url.ts";

const RecordingPlayer = lazy(() => import("../../features/recordings/components/recording-player.tsx"));

export function RecordingPage() {
  const { t } = useTranslation();
  const { sessionId = "" } = useParams();
  const [searchParams] = useSearchParams();
  const terminal = Number(searchParams.get("terminal")) || undefined;
  const me = useSignedInUser();
  const query = useRecording(sessionId, terminal);
  const labTitle = useLabTitles();
  const whose = query.data?.session;

  return (
    <main className="page">
      <title>{t("app.pageTitle", { page: t("recordings.title") })}</title>
      <p>
        <Link to={paths.recordings.to()} className="back-link">
          {isStaff(me.role) ? t("recordings.list.back") : t("recordings.list.ownBack")}
        </Link>
      </p>
      <h1 className="page-title">{t("recordings.title")}</h1>
      {whose && (
        <p className="lead">
          {t("recordings.whose", { student: whose.owner, lab: labTitle(whose.labId).text })}
        </p>
      )}
      <p>
        <code>{sessionId}</code>
        {terminal !== undefined && <> · {t("console.tabs.terminal", { number: terminal })}</>}{" "}
        <a href={recordingFileUrl(sessionId, terminal)} download={recordingFileName(sessionId, terminal)}>
          {t("recordings.download")}
        </a>
      </p>
      {query.isPending ? (
        <Loading label={t("recordings.loading")} />
      ) : query.isError ? (
        <ErrorPanel
          title={t("recordings.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <Suspense fallback={<Loading label={t("recordings.loading")} />}>
          <RecordingPlayer cast={query.data} />
        </Suspense>
      )}
    </main>
  );
}
