import { useTranslation } from "react-i18next";
import type { SessionList, SessionStatus } from "../../../../common/api.ts";
import { useFormat } from "../../../lib/i18n/use-format.ts";

const shownStatuses: SessionStatus[] = ["starting", "running", "stopping", "failed"];

/** How many sessions match the filters, by status, over all pages. */
export function StatusCounts({ list }: { list: SessionList }) {
  const { t } = useTranslation();
  const format = useFormat();
  return (
    <ul className="counts" aria-label={t("sessions.counts.label")}>
      <li className="count">
        <span className="count-label">{t("sessions.counts.total")}</span>{" "}
        <span className="count-value">{format.number(list.total)}</span>
      </li>
      {shownStatuses.map((status) => (
        <li key={status} className={`count count-${status}`}>
          <span className="count-label">{t(`sessions.status.${status}`)}</span>{" "}
          <span className="count-value">{format.number(list.counts[status])}</span>
        </li>
      ))}
    </ul>
  );
}
