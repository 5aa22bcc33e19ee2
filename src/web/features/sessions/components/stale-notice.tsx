import { useTranslation } from "react-i18next";
import type { SessionList } from "../../../../common/api.ts";

export function StaleNotice({ list }: { list: SessionList | undefined }) {
  const { t } = useTranslation();
  if (!list?.stale) return null;
  return (
    <p className="notice notice-warning" role="status">
      {t("sessions.stale")}
    </p>
  );
}
