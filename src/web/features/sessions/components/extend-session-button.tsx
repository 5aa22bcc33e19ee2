import { useTranslation } from "react-i18next";
import type { Session } from "../../../../common/api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { isStaff } from "../../../lib/roles.ts";
import { useSignedInUser } from "../../../lib/signed-in-user.ts";
import { useExtendSession } from "../api/extend-session.ts";
import "./extend-session.css";

/**
 * More time for a session: the lab's extendMinutes, up to its maxExtensions for students. TAs and
 * instructors may extend any session beyond that (the BFF enforces the same rules). Nothing shows
 * until the session's lab is known.
 */
export function ExtendSessionButton({ session, lab }: { session: Session; lab: LocalizedLab | undefined }) {
  const { t } = useTranslation();
  const format = useFormat();
  const me = useSignedInUser();
  const extend = useExtendSession();
  if (!lab) return null;
  const { extendMinutes, maxExtensions } = lab.session;
  const staff = isStaff(me.role);
  if (!staff && maxExtensions === 0) return null;
  const usedUp = !staff && session.extensions >= maxExtensions;

  return (
    <div className="extend-session">
      <button
        type="button"
        className="button"
        disabled={usedUp || extend.isPending}
        onClick={() => extend.mutate(session.id)}
      >
        {extend.isPending
          ? t("sessions.extend.pending")
          : t("sessions.extend.button", { duration: format.coarse(extendMinutes * 60_000) })}
      </button>
      <span className="muted small" data-testid="extensions-used">
        {usedUp
          ? t("sessions.extend.noneLeft")
          : t("sessions.extend.used", { used: session.extensions, count: maxExtensions })}
      </span>
      {extend.isError && (
        <p className="notice notice-error" role="alert">
          <ErrorText error={extend.error} />
        </p>
      )}
    </div>
  );
}
