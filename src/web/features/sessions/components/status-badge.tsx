import type { SessionStatus } from "../../../../common/api.ts";

export const statusLabels: Record<SessionStatus, string> = {
  starting: "Starting",
  running: "Running",
  stopping: "Stopping",
  failed: "Failed",
  deleted: "Ended",
};

export function StatusBadge({ status }: { status: SessionStatus }) {
  return (
    <span className={`status-badge status-${status}`} data-status={status}>
      {statusLabels[status]}
    </span>
  );
}
