import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import type { PastSession, Session } from "../../../../common/api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { LangText } from "../../../components/lang-text.tsx";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import { paths } from "../../../lib/paths.ts";
import { usePastSessions } from "../api/get-past-sessions.ts";
import "./past-sessions.css";

/**
 * The person's ended sessions, newest first: when each ran, how its last "Check my work" went, and
 * its console recording. Nothing at all until there is one: a first-time student has no history.
 */
export function PastSessions({
  live,
  labTitle,
}: {
  live: Session[];
  labTitle: (labId: string) => LocalText;
}) {
  const { t } = useTranslation();
  const query = usePastSessions(live);
  if (query.isPending || (query.data && query.data.items.length === 0)) return null;
  return (
    <section className="section" aria-labelledby="past-sessions-title">
      <h2 id="past-sessions-title" className="section-title">
        {t("sessions.past.title")}
      </h2>
      {query.data ? (
        <ul className="past-sessions">
          {query.data.items.map((session) => (
            <PastSessionItem key={session.id} session={session} labTitle={labTitle(session.labId)} />
          ))}
        </ul>
      ) : (
        <p className="muted">
          {t("sessions.past.loadFailed")} <ErrorText error={query.error} />
        </p>
      )}
    </section>
  );
}

function PastSessionItem({ session, labTitle }: { session: PastSession; labTitle: LocalText }) {
  const { t } = useTranslation();
  const format = useFormat();
  const check = session.lastSelfCheck;
  return (
    <li className="past-session">
      <strong>
        <LangText text={labTitle} />
      </strong>
      <span className="muted">
        {!session.endedAt
          ? t("sessions.past.started", { start: format.dateTime(session.startedAt) })
          : sameDay(session.startedAt, session.endedAt)
            ? t("sessions.past.ranSameDay", {
                start: format.dateTime(session.startedAt),
                endTime: format.shortTime(session.endedAt),
              })
            : t("sessions.past.ran", {
                start: format.dateTime(session.startedAt),
                end: format.dateTime(session.endedAt),
              })}
      </span>
      <span data-testid="past-score">
        {!check
          ? t("sessions.past.notChecked")
          : check.score === null
            ? t("sessions.past.notCheckable")
            : t("sessions.past.score", { score: check.score, count: check.maxScore })}
      </span>
      <Link to={paths.recording.to(session.id)}>{t("sessions.past.recording")}</Link>
    </li>
  );
}

/** In the reader's own time zone, as the dates are shown. */
function sameDay(a: string, b: string): boolean {
  return new Date(a).toDateString() === new Date(b).toDateString();
}
