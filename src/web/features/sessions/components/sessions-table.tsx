import { memo } from "react";
import { Link } from "react-router";
import type { Session } from "../../../../common/api.ts";
import { Elapsed, TimeLeft } from "../../../components/duration.tsx";
import { paths } from "../../../lib/paths.ts";
import { StatusBadge } from "./status-badge.tsx";

/**
 * One page of sessions. Rows are memoized on the session object: TanStack Query's structural sharing
 * keeps unchanged sessions identical across polls, so a poll re-renders only rows that changed, and
 * the per-second clock re-renders only the age and time-left texts whose minute changed.
 */
export function SessionsTable({
  sessions,
  labTitles,
  busy,
}: {
  sessions: Session[];
  labTitles: ReadonlyMap<string, string>;
  busy: boolean;
}) {
  return (
    <div className="table-scroll">
      <table className="table" aria-label="Sessions" aria-busy={busy}>
        <thead>
          <tr>
            <th scope="col">Student</th>
            <th scope="col">Lab</th>
            <th scope="col">Status</th>
            <th scope="col">Phase</th>
            <th scope="col">Age</th>
            <th scope="col">Time left</th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((session) => (
            <SessionRow
              key={session.id}
              session={session}
              labTitle={labTitles.get(session.labId) ?? session.labId}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

const SessionRow = memo(function SessionRow({ session, labTitle }: { session: Session; labTitle: string }) {
  const hasTimeLeft = session.status === "starting" || session.status === "running";
  return (
    <tr data-status={session.status}>
      <th scope="row">
        <Link to={paths.session.to(session.id)}>{session.owner}</Link>
      </th>
      <td>{labTitle}</td>
      <td>
        <StatusBadge status={session.status} />
        {session.message && <span className="row-message">{session.message}</span>}
      </td>
      <td>{session.phase || "—"}</td>
      <td>
        <Elapsed since={session.createdAt} format="coarse" />
      </td>
      <td>{hasTimeLeft ? <TimeLeft until={session.expiresAt} /> : "—"}</td>
    </tr>
  );
});
