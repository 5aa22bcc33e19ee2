import { useTranslation } from "react-i18next";
import type { HelpRequest } from "../../../../common/api.ts";
import "./help.css";

/** A raised hand, waiting or answered; nothing when the hand is down. */
export function HandBadge({ help }: { help: HelpRequest | null | undefined }) {
  const { t } = useTranslation();
  if (!help) return null;
  const answered = help.acknowledgedBy !== null;
  return (
    <span
      className={answered ? "hand-badge hand-badge-answered" : "hand-badge"}
      title={help.note || undefined}
      data-testid="hand-badge"
    >
      {answered ? t("help.badge.answered", { by: help.acknowledgedBy }) : t("help.badge.raised")}
    </span>
  );
}
