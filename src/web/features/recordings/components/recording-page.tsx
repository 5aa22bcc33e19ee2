// /recordings/:sessionId: replays a session's console recording (staff any, students their own),
// also after the session itself is gone.
import { useQuery } from "@tanstack/react-query";
import { lazy, Suspense } from "react";
import { useTranslation } from "react-i18next";
import { Link, useParams } from "react-router";
import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import { ApiError } from "../../../lib/api-error.ts";
import { paths } from "../../../lib/paths.ts";
import { isStaff } from "../../auth/components/role-label.ts";
import { useSignedInUser } from "../../auth/components/signed-in-user.ts";
import { recordingFileUrl } from "../api/recording-url.ts";
import { parseCast } from "../lib/asciicast-player.ts";

const RecordingPlayer = lazy(() => import("./recording-player.tsx"));

async function fetchCast(sessionId: string) {
  const response = await fetch(recordingFileUrl(sessionId), {
    credentials: "same-origin",
    cache: "no-store",
  });
  if (!response.ok) throw new ApiError(response.status, "http", `HTTP ${response.status}`);
  return parseCast(await response.text());
}

export function RecordingPage() {
  const { t } = useTranslation();
  const { sessionId = "" } = useParams();
  const me = useSignedInUser();
  const query = useQuery({ queryKey: ["recording", sessionId], queryFn: () => fetchCast(sessionId) });

  return (
    <main className="page">
      <title>{t("app.pageTitle", { page: t("recordings.title") })}</title>
      <p>
        <Link to={paths.recordings.to()} className="back-link">
          {isStaff(me.role) ? t("recordings.list.back") : t("recordings.list.ownBack")}
        </Link>
      </p>
      <h1 className="page-title">{t("recordings.title")}</h1>
      <p>
        <code>{sessionId}</code>{" "}
        <a href={recordingFileUrl(sessionId)} download={`${sessionId}.cast`}>
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
