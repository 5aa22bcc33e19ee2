import { useTranslation } from "react-i18next";
import type { Session } from "../../../../common/api.ts";
import { TimeLeft } from "../../../components/duration.tsx";
import { ErrorText } from "../../../components/error-text.tsx";
import { useResumeSession } from "../api/resume-session.ts";

/**
 * The idle limit on a session (docs/operations.md, "Idle sessions"): before it, when the session
 * ends or pauses and that a key in the console resets it; once it paused the VM, a way to resume.
 */
export function IdleNotice({ session }: { session: Session }) {
  const { t } = useTranslation();
  const resume = useResumeSession();
  const idle = session.idle;
  if (!idle) return null;
  if (idle.state === "paused") {
    return (
      <div className="notice notice-warning idle-notice" role="alert" data-idle="paused">
        <p>{t("sessions.idle.paused")}</p>
        <button
          type="button"
          className="button button-primary"
          disabled={resume.isPending}
          onClick={() => resume.mutate(session.id)}
        >
          {resume.isPending ? t("sessions.idle.resuming") : t("sessions.idle.resume")}
        </button>
        {resume.isError && (
          <p className="notice notice-error" role="alert">
            <ErrorText error={resume.error} />
          </p>
        )}
      </div>
    );
  }
  return (
    <p className="notice notice-warning idle-notice" role="alert" data-idle="warning">
      {t(idle.action === "pause" ? "sessions.idle.warningPause" : "sessions.idle.warningEnd")}{" "}
      <TimeLeft until={idle.endsAt} />
    </p>
  );
}
