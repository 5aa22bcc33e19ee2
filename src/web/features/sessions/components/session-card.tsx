import { Link } from "react-router";
import type { Session } from "../../../../common/api.ts";
import { Elapsed, TimeLeft } from "../../../components/duration.tsx";
import { paths } from "../../../lib/paths.ts";
import { useSignedInUser } from "../../auth/components/signed-in-user.ts";
import { EndSessionButton } from "./end-session-button.tsx";
import { ExpiryWarning } from "./expiry-warning.tsx";
import { ExtendSessionButton } from "./extend-session-button.tsx";
import { SessionTimeline } from "./session-timeline.tsx";
import { StatusBadge } from "./status-badge.tsx";

/** A student's view of one session: where its VM is, how long it has left, and how to end it. */
export function SessionCard({
  session,
  labTitle,
  headingLevel = 3,
  showDetailsLink = true,
  onEnded,
}: {
  session: Session;
  labTitle: string;
  headingLevel?: 2 | 3;
  showDetailsLink?: boolean;
  onEnded?: () => void;
}) {
  const Heading = headingLevel === 2 ? "h2" : "h3";
  const titleId = `session-${session.id}-title`;
  const live = session.status === "starting" || session.status === "running";
  const me = useSignedInUser();

  return (
    <article className="card session-card" aria-labelledby={titleId} data-status={session.status}>
      <header className="session-card-header">
        <Heading id={titleId} className="card-title">
          {labTitle}
        </Heading>
        {/* Announce status changes, not the ticking clock below. */}
        <span aria-live="polite">
          <StatusBadge status={session.status} />
        </span>
      </header>

      <p className="session-summary">{summaryFor(session)}</p>

      {live && <SessionTimeline session={session} />}
      {session.status === "starting" && (
        <p className="muted small">A lab VM usually takes about 20 seconds to start.</p>
      )}

      {live && <ExpiryWarning session={session} own={session.owner === me.username} />}

      {session.message && (
        <p className={`notice ${session.status === "failed" ? "notice-error" : "notice-warning"}`}>
          {session.message}
        </p>
      )}

      <div className="card-actions">
        {showDetailsLink && (
          <Link className="button" to={paths.session.to(session.id)}>
            Details
          </Link>
        )}
        {live && <ExtendSessionButton session={session} />}
        {session.status !== "stopping" && session.status !== "deleted" && (
          <EndSessionButton session={session} labTitle={labTitle} onEnded={onEnded} />
        )}
      </div>
    </article>
  );
}

function summaryFor(session: Session) {
  switch (session.status) {
    case "starting":
      return (
        <>
          Starting your VM… <Elapsed since={session.createdAt} />
        </>
      );
    case "running":
      return (
        <>
          Running for <Elapsed since={runningSince(session)} format="coarse" /> · Time left{" "}
          <TimeLeft until={session.expiresAt} />
        </>
      );
    case "stopping":
      return "Ending: the VM is shutting down.";
    case "failed":
      return "The VM could not start.";
    case "deleted":
      return "This session has ended.";
  }
}

function runningSince(session: Session): string {
  return session.timeline.find((entry) => entry.phase === "Running")?.at ?? session.createdAt;
}
