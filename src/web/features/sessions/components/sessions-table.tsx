import { memo, type ComponentType } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import type { HelpRequest, Session } from "../../../../common/api.ts";
import { Elapsed, TimeLeft } from "../../../components/duration.tsx";
import { LangText } from "../../../components/lang-text.tsx";
import { useLanguage } from "../../../lib/i18n/use-language.ts";
import type { LocalText } from "../../../lib/i18n/pick-translation.ts";
import { sessionNoticeText } from "../lib/session-notice.ts";
import { paths } from "../../../lib/paths.ts";
import { isVmiPhase } from "../lib/session-phase.ts";
import { StatusBadge } from "./status-badge.tsx";

/** How a raised hand shows beside its student: the help feature's badge, which the page passes in. */
export type HelpBadgeComponent = ComponentType<{ help: HelpRequest | undefined }>;

/**
 * One page of sessions. Rows are memoized on the session object: TanStack Query's structural sharing
 * keeps unchanged sessions identical across polls, so a poll re-renders only rows that changed, and
 * the per-second clock re-renders only the age and time-left texts whose minute changed. `HelpBadge`
 * is a component rather than an element per row, so that it stays the same object and the rows'
 * memo holds.
 */
export function SessionsTable({
  sessions,
  labTitle,
  HelpBadge,
  busy,
}: {
  sessions: Session[];
  labTitle: (labId: string) => LocalText;
  HelpBadge: HelpBadgeComponent;
  busy: boolean;
}) {
  const { t } = useTranslation();
  return (
    <div className="table-scroll">
      <table className="table" aria-label={t("sessions.table.label")} aria-busy={busy}>
        <thead>
          <tr>
            <th scope="col">{t("sessions.table.student")}</th>
            <th scope="col">{t("sessions.table.lab")}</th>
            <th scope="col">{t("sessions.table.status")}</th>
            <th scope="col">{t("sessions.table.phase")}</th>
            <th scope="col">{t("sessions.table.age")}</th>
            <th scope="col">{t("sessions.table.timeLeft")}</th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((session) => (
            <SessionRow
              key={session.id}
              session={session}
              labTitle={labTitle(session.labId)}
              HelpBadge={HelpBadge}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

const SessionRow = memo(function SessionRow({
  session,
  labTitle,
  HelpBadge,
}: {
  session: Session;
  labTitle: LocalText;
  HelpBadge: HelpBadgeComponent;
}) {
  const { t } = useTranslation();
  const hasTimeLeft = session.status === "starting" || session.status === "running";
  const { language } = useLanguage();
  const notice = sessionNoticeText(session, t, language);
  return (
    <tr data-status={session.status}>
      <th scope="row" translate="no">
        <Link to={paths.session.to(session.id)}>{session.owner}</Link>
        <HelpBadge help={session.help} />
      </th>
      <td>
        <LangText text={labTitle} />
      </td>
      <td>
        <StatusBadge status={session.status} />
        {notice && (
          <span className="row-message">
            <LangText text={notice} />
          </span>
        )}
      </td>
      <td>{isVmiPhase(session.phase) ? t(`sessions.phase.${session.phase}`) : session.phase || "—"}</td>
      <td>
        <Elapsed since={session.createdAt} format="coarse" />
      </td>
      <td>{hasTimeLeft ? <TimeLeft until={session.expiresAt} /> : "—"}</td>
    </tr>
  );
});
