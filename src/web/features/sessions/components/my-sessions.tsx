import type { SessionList } from "../../../../common/api.ts";
import { ErrorPanel, Loading, RefreshWarning } from "../../../components/page-state.tsx";
import { useLabTitles } from "../../labs/api/get-labs.ts";
import type { useSessions } from "../api/get-sessions.ts";
import { SessionCard } from "./session-card.tsx";
import { StaleNotice } from "./stale-notice.tsx";
import { visibleSessions } from "./visible-sessions.ts";

/** The signed-in person's sessions, newest first; ended ones drop out. */
export function MySessions({ query }: { query: ReturnType<typeof useSessions> }) {
  const labTitles = useLabTitles();

  return (
    <section className="section" aria-labelledby="my-sessions-title">
      <h2 id="my-sessions-title" className="section-title">
        Your sessions
      </h2>
      {query.isPending ? (
        <Loading label="Loading your sessions…" />
      ) : query.isError && !query.data ? (
        <ErrorPanel
          title="Could not load your sessions"
          error={query.error}
          onRetry={() => void query.refetch()}
        />
      ) : (
        <>
          <RefreshWarning error={query.error} />
          <StaleNotice list={query.data} />
          <SessionCards list={query.data} labTitles={labTitles} />
        </>
      )}
    </section>
  );
}

function SessionCards({ list, labTitles }: { list: SessionList; labTitles: ReadonlyMap<string, string> }) {
  const sessions = visibleSessions(list);
  if (sessions.length === 0) {
    return <p className="empty">No sessions yet. Launch a lab below to start a virtual machine.</p>;
  }
  return (
    <div className="session-grid">
      {sessions.map((session) => (
        <SessionCard
          key={session.id}
          session={session}
          labTitle={labTitles.get(session.labId) ?? session.labId}
        />
      ))}
    </div>
  );
}
