import { useTranslation } from "react-i18next";
import type { SessionList } from "../../../../common/api.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import { useLabTitles } from "../../labs/api/get-labs.ts";
import type { useSessions } from "../api/get-sessions.ts";
import { SessionCard } from "./session-card.tsx";
import { StaleNotice } from "./stale-notice.tsx";
import { visibleSessions } from "./visible-sessions.ts";

/** The signed-in person's sessions, newest first; ended ones drop out. */
export function MySessions({ query }: { query: ReturnType<typeof useSessions> }) {
  const { t } = useTranslation();
  const labTitle = useLabTitles();

  return (
    <section className="section" aria-labelledby="my-sessions-title">
      <h2 id="my-sessions-title" className="section-title">
        {t("sessions.mine.title")}
      </h2>
      {query.isPending ? (
        <Loading label={t("sessions.mine.loading")} />
      ) : query.isError && !query.data ? (
        <ErrorPanel
          title={t("sessions.mine.loadFailed")}
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          <StaleNotice list={query.data} />
          <SessionCards list={query.data} labTitle={labTitle} />
        </>
      )}
    </section>
  );
}

function SessionCards({ list, labTitle }: { list: SessionList; labTitle: (labId: string) => LocalText }) {
  const { t } = useTranslation();
  const sessions = visibleSessions(list);
  if (sessions.length === 0) {
    return <p className="empty">{t("sessions.mine.empty")}</p>;
  }
  return (
    <div className="session-grid">
      {sessions.map((session) => (
        <SessionCard key={session.id} session={session} labTitle={labTitle(session.labId)} />
      ))}
    </div>
  );
}
