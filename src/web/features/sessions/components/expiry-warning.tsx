import { useTranslation } from "react-i18next";
import type { Session } from "../../../../common/api.ts";
import { useClockText } from "../../../lib/clock.ts";
import { expiryWarningLevel } from "../lib/expiry-warning-level.ts";

/**
 * A warning in the last 10, 5 and 1 minutes of a session. The clock is read through a formatter that
 * returns the level, so this re-renders (and screen readers announce it) once per threshold.
 */
export function ExpiryWarning({ session, own }: { session: Session; own: boolean }) {
  const { t } = useTranslation();
  const end = Date.parse(session.expiresAt);
  const level = useClockText((now) => String(expiryWarningLevel(end - now) ?? ""));
  if (level === "") return null;
  const text =
    level === "1"
      ? own
        ? t("sessions.expiry.ownLastMinute")
        : t("sessions.expiry.otherLastMinute")
      : own
        ? t("sessions.expiry.own", { minutes: Number(level) })
        : t("sessions.expiry.other", { minutes: Number(level) });
  return (
    <p key={level} className="notice notice-warning expiry-warning" role="alert" data-level={level}>
      {text}
    </p>
  );
}
