import type { SessionList, SessionStatus } from "../../../../common/api.ts";
import { statusLabels } from "./status-badge.tsx";

const shownStatuses: SessionStatus[] = ["starting", "running", "stopping", "failed"];

/** How many sessions match the filters, by status, over all pages. */
export function StatusCounts({ list }: { list: SessionList }) {
  return (
    <ul className="counts" aria-label="Sessions by status">
      <li className="count">
        <span className="count-label">Total</span> <span className="count-value">{list.total}</span>
      </li>
      {shownStatuses.map((status) => (
        <li key={status} className={`count count-${status}`}>
          <span className="count-label">{statusLabels[status]}</span>{" "}
          <span className="count-value">{list.counts[status]}</span>
        </li>
      ))}
    </ul>
  );
}
