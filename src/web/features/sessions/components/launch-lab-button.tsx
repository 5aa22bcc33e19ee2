import { Link } from "react-router";
import type { LabSummary, Session } from "../../../../common/api.ts";
import { getErrorMessage } from "../../../lib/api-error.ts";
import { paths } from "../../../lib/paths.ts";
import { useCreateSession } from "../api/create-session.ts";

/** Launch for a lab, or a link to the person's session when one is already active (one per lab). */
export function LaunchLabButton({
  lab,
  activeSession,
}: {
  lab: LabSummary;
  activeSession: Session | undefined;
}) {
  const createSession = useCreateSession();

  if (activeSession) {
    return (
      <Link
        className="button"
        to={paths.session.to(activeSession.id)}
        aria-label={`Open session for ${lab.title}`}
      >
        Open session
      </Link>
    );
  }

  return (
    <div className="launch">
      <button
        type="button"
        className="button button-primary"
        aria-label={`Launch ${lab.title}`}
        disabled={createSession.isPending}
        onClick={() => createSession.mutate(lab.id)}
      >
        {createSession.isPending ? "Launching…" : "Launch"}
      </button>
      {createSession.isError && (
        <p className="notice notice-error" role="alert">
          {getErrorMessage(createSession.error)}
        </p>
      )}
    </div>
  );
}
