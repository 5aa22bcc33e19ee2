import { useTranslation } from "react-i18next";
import type { Session } from "../../../../common/api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { useFormat } from "../../../lib/i18n/use-format.ts";
import { isStaff } from "../../auth/components/role-label.ts";
import { useSignedInUser } from "../../auth/components/signed-in-user.ts";
import { useLabs } from "../../labs/api/get-labs.ts";
import { useExtendSession } from "../api/extend-session.ts";
import "./extend-session.css";

/**
 * More time for a session: the lab's extendMinutes, up to its maxExtensions for students. TAs and
 * instructors may extend any session beyond that (the BFF enforces the same rules).
 */
export function ExtendSessionButton({ session }: { session: Session }) {
  const { t } = useTranslation();
  const format = useFormat();
  const me = useSignedInUser();
  const lab = useLabs().data?.find((entry) => entry.id === session.labId);
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
