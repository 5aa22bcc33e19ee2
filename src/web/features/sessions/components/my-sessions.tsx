import { useTranslation } from "react-i18next";
import type { SessionList } from "../../../../common/api.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import type { useSessions } from "../api/get-sessions.ts";
import { SessionCard } from "./session-card.tsx";
import { StaleNotice } from "./stale-notice.tsx";
import { visibleSessions } from "../lib/visible-sessions.ts";

/**
 * The signed-in person's sessions, newest first; ended ones drop out. `labs` is the catalog
 * (undefined until it is in), `labTitle` a lab's title by its id.
 */
export function MySessions({
  query,
  labs,
  labTitle,
}: {
  query: ReturnType<typeof useSessions>;
  labs: LocalizedLab[] | undefined;
  labTitle: (labId: string) => LocalText;
}) {
  const { t } = useTranslation();

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
          <SessionCards list={query.data} labs={labs} labTitle={labTitle} />
        </>
      )}
    </section>
  );
}

function SessionCards({
  list,
  labs,
  labTitle,
}: {
  list: SessionList;
  labs: LocalizedLab[] | undefined;
  labTitle: (labId: string) => LocalText;
}) {
  const { t } = useTranslation();
  const sessions = visibleSessions(list);
  if (sessions.length === 0) {
    return <p className="empty">{t("sessions.mine.empty")}</p>;
  }
  return (
    <div className="session-grid">
      {sessions.map((session) => (
        <SessionCard
          key={session.id}
          session={session}
          lab={labs?.find((lab) => lab.id === session.labId)}
          labTitle={labTitle(session.labId)}
        />
      ))}
    </div>
  );
}
