import { useTranslation } from "react-i18next";
import { Link, useNavigate } from "react-router";
import type { Session } from "../../../../common/api.ts";
import { ErrorText } from "../../../components/error-text.tsx";
import { paths } from "../../../lib/paths.ts";
import type { LocalizedLab } from "../../../lib/localize-lab.ts";
import { useCreateSession } from "../api/create-session.ts";

/**
 * Launch for a lab, or a link to the person's session when one is already active (one per lab). A
 * launch goes straight to the new session's page, where it boots and its console opens.
 */
export function LaunchLabButton({
  lab,
  activeSession,
}: {
  lab: LocalizedLab;
  activeSession: Session | undefined;
}) {
  const { t } = useTranslation();
  const createSession = useCreateSession();
  const navigate = useNavigate();

  if (activeSession) {
    return (
      <Link
        className="button"
        to={paths.session.to(activeSession.id)}
        aria-label={t("sessions.launch.openLabel", { lab: lab.title.text })}
      >
        {t("sessions.launch.open")}
      </Link>
    );
  }

  return (
    <div className="launch">
      <button
        type="button"
        className="button button-primary"
        aria-label={t("sessions.launch.label", { lab: lab.title.text })}
        disabled={createSession.isPending}
        onClick={() =>
          createSession.mutate(lab.id, { onSuccess: (session) => navigate(paths.session.to(session.id)) })
        }
      >
        {createSession.isPending ? t("sessions.launch.pending") : t("sessions.launch.button")}
      </button>
      {createSession.isError && (
        <p className="notice notice-error" role="alert">
          <ErrorText error={createSession.error} />
        </p>
      )}
    </div>
  );
}
