// /recordings/:sessionId: replays a session's console recording (staff any, students their own),
// also after the session itself is gone; ?terminal=N one of its terminals' instead, ?terminal=-1 its
// screen's. Whose and which lab come from the recording's header, the lab's title from the labs
// feature.
import { lazy, Suspense, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { Link, useParams, useSearchParams } from "react-router";
import { graphicalConsole } from "../../../common/console-protocol.ts";
import { ErrorPanel, Loading } from "../../components/page-state.tsx";
import { paths } from "../../lib/paths.ts";
import { isStaff } from "../../lib/roles.ts";
import { useSignedInUser } from "../../lib/signed-in-user.ts";
import { useLabTitles } from "../../features/labs/api/get-labs.ts";
import { useRecording } from "../../features/recordings/api/get-recording.ts";
import { useScreenRecording } from "../../features/recordings/api/get-screen-recording.ts";
import { recordingFileName, recordingFileUrl } from "../../features/recordings/api/recording-url.ts";

const RecordingPlayer = lazy(() => import("../../features/recordings/components/recording-player.tsx"));
const ScreenRecordingPlayer = lazy(
  () => import("../../features/recordings/components/screen-recording-player.tsx"),
);

export function RecordingPage() {
  const { sessionId = "" } = useParams();
  const [searchParams] = useSearchParams();
  const terminal = Number(searchParams.get("terminal")) || undefined;
  return terminal === graphicalConsole ? (
    <ScreenRecordingView sessionId={sessionId} />
  ) : (
    <ConsoleRecordingView sessionId={sessionId} terminal={terminal} />
  );
}

function ConsoleRecordingView({ sessionId, terminal }: { sessionId: string; terminal: number | undefined }) {
  const { t } = useTranslation();
  const query = useRecording(sessionId, terminal);
  return (
    <RecordingFrame
      sessionId={sessionId}
      terminal={terminal}
      title={t("recordings.title")}
      which={terminal !== undefined && t("console.tabs.terminal", { number: terminal })}
      download={t("recordings.download")}
      whose={query.data?.session}
      query={query}
    >
      {(cast) => <RecordingPlayer cast={cast} />}
    </RecordingFrame>
  );
}

function ScreenRecordingView({ sessionId }: { sessionId: string }) {
  const { t } = useTranslation();
  const query = useScreenRecording(sessionId);
  return (
    <RecordingFrame
      sessionId={sessionId}
      terminal={graphicalConsole}
      title={t("recordings.screenTitle")}
      which={t("recordings.screen")}
      download={t("recordings.downloadScreen")}
      whose={query.data?.session}
      query={query}
    >
      {(recording) => <ScreenRecordingPlayer recording={recording} />}
    </RecordingFrame>
  );
}

/** The page around a player: the way back, whose recording, its download, and its loading states. */
function RecordingFrame<Data>({
  sessionId,
  terminal,
  title,
  which,
  download,
  whose,
  query,
  children,
}: {
  sessionId: string;
  terminal: number | undefined;
  title: string;
  which: string | false;
  download: string;
  whose: { owner: string; labId: string } | undefined;
  query: { isPending: boolean; isError: boolean; error: unknown; data: Data | undefined; refetch(): unknown };
  children: (data: Data) => ReactNode;
}) {
  const { t } = useTranslation();
  const me = useSignedInUser();
  const labTitle = useLabTitles();
  return (
    <main className="page">
      <title>{t("app.pageTitle", { page: title })}</title>
      <p>
        <Link to={paths.recordings.to()} className="back-link">
          {isStaff(me.role) ? t("recordings.list.back") : t("recordings.list.ownBack")}
        </Link>
      </p>
      <h1 className="page-title">{title}</h1>
      {whose && (
        <p className="lead">
          {t("recordings.whose", { student: whose.owner, lab: labTitle(whose.labId).text })}
        </p>
      )}
      <p>
        <code>{sessionId}</code>
        {which && <> · {which}</>}{" "}
        <a href={recordingFileUrl(sessionId, terminal)} download={recordingFileName(sessionId, terminal)}>
          {download}
        </a>
      </p>
      {query.isPending ? (
        <Loading label={t("recordings.loading")} />
      ) : query.isError || query.data === undefined ? (
        <ErrorPanel
          title={t("recordings.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <Suspense fallback={<Loading label={t("recordings.loading")} />}>{children(query.data)}</Suspense>
      )}
    </main>
  );
}
