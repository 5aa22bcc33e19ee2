import { Link, useNavigate, useParams } from "react-router";
import type { Session } from "../../../../common/api.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { isApiError } from "../../../lib/api-error.ts";
import { paths } from "../../../lib/paths.ts";
import { isStaff } from "../../auth/components/role-label.ts";
import { useSignedInUser } from "../../auth/components/signed-in-user.ts";
import { SessionConsole } from "../../console/components/session-console.tsx";
import { SelfCheckPanel } from "../../grading/components/self-check-panel.tsx";
import { useLabTitles } from "../../labs/api/get-labs.ts";
import { useSession } from "../api/get-session.ts";
import { SessionCard } from "./session-card.tsx";

export function SessionPage() {
  const { sessionId = "" } = useParams();
  const query = useSession(sessionId);
  const session = query.data;
  const gone = isApiError(query.error, 404) || session?.status === "deleted";

  return (
    <main className="page">
      <title>Session · Lab Console</title>
      <BackLink />
      <h1 className="page-title">Session</h1>
      {query.isPending ? (
        <Loading label="Loading the session…" />
      ) : gone ? (
        <div className="panel" role="alert">
          <h2 className="panel-title">Session not found</h2>
          <p>This session has ended, or it is not one of yours. Your own sessions are on the labs page.</p>
        </div>
      ) : !session ? (
        <ErrorPanel
          title="Could not load the session"
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          <SessionDetails session={session} />
        </>
      )}
    </main>
  );
}

/** Staff arrive here from the sessions table, students from their labs page. */
function BackLink() {
  const me = useSignedInUser();
  const [to, label] = isStaff(me.role)
    ? [paths.sessions.to(), "Back to sessions"]
    : [paths.home.to(), "Back to labs"];
  return (
    <p>
      <Link to={to} className="back-link">
        ← {label}
      </Link>
    </p>
  );
}

function SessionDetails({ session }: { session: Session }) {
  const labTitle = useLabTitles();
  const navigate = useNavigate();
  return (
    <>
      <SessionCard
        session={session}
        labTitle={labTitle(session.labId)}
        headingLevel={2}
        showDetailsLink={false}
        onEnded={() => navigate(paths.home.to())}
      />
      <dl className="details">
        <dt>Student</dt>
        <dd>{session.owner}</dd>
        <dt>Session id</dt>
        <dd>
          <code>{session.id}</code>
        </dd>
        <dt>Started</dt>
        <dd>{new Date(session.createdAt).toLocaleString()}</dd>
        <dt>Ends</dt>
        <dd>{new Date(session.expiresAt).toLocaleString()}</dd>
      </dl>
      <SessionConsole key={session.id} session={session} />
      <SelfCheckPanel session={session} />
    </>
  );
}
