// /recordings/:sessionId: replays a session's console recording (staff any, students their own),
// also after the session itself is gone.
import { useQuery } from "@tanstack/react-query";
import { lazy, Suspense } from "react";
import { useTranslation } from "react-i18next";
import { useParams } from "react-router";
import { ErrorPanel, Loading } from "../../../components/page-state.tsx";
import { ApiError } from "../../../lib/api-error.ts";
import { parseCast } from "../lib/asciicast-player.ts";

const RecordingPlayer = lazy(() => import("./recording-player.tsx"));

function recordingUrl(sessionId: string): string {
  return `/api/sessions/${encodeURIComponent(sessionId)}/recording`;
}

async function fetchCast(sessionId: string) {
  const response = await fetch(recordingUrl(sessionId), { credentials: "same-origin", cache: "no-store" });
  if (!response.ok) throw new ApiError(response.status, "http", `HTTP ${response.status}`);
  return parseCast(await response.text());
}

export function RecordingPage() {
  const { t } = useTranslation();
  const { sessionId = "" } = useParams();
  const query = useQuery({ queryKey: ["recording", sessionId], queryFn: () => fetchCast(sessionId) });

  return (
    <main className="page">
      <title>{t("app.pageTitle", { page: t("recordings.title") })}</title>
      <h1 className="page-title">{t("recordings.title")}</h1>
      <p>
        <code>{sessionId}</code>{" "}
        <a href={recordingUrl(sessionId)} download={`${sessionId}.cast`}>
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
