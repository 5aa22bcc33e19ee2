import { useTranslation } from "react-i18next";
import type { SessionStatus } from "../../../../common/api.ts";

export function StatusBadge({ status }: { status: SessionStatus }) {
  const { t } = useTranslation();
  return (
    <span className={`status-badge status-${status}`} data-status={status}>
      {t(`sessions.status.${status}`)}
    </span>
  );
}
